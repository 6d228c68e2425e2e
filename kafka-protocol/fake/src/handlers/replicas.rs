//! Where replicas live, as the admin APIs see it: ElectLeaders,
//! AlterPartitionReassignments, ListPartitionReassignments and
//! DescribeLogDirs. The fake keeps every replica in sync, so an election
//! or a reassignment completes at once: a reassignment is never listed as
//! under way, and a cancel finds none (NO_REASSIGNMENT_IN_PROGRESS). Each
//! broker has one log directory, named after it, whose size is the
//! cluster's byte budget.

use std::collections::BTreeSet;

use kafka_wire::messages::{
    alter_partition_reassignments_response, describe_log_dirs_response, elect_leaders_response,
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
    DescribeLogDirsRequest, DescribeLogDirsResponse, ElectLeadersRequest, ElectLeadersResponse,
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::dispatch::Context;
use crate::state::State;

/// ElectLeaders' election types.
const PREFERRED: i8 = 0;
const UNCLEAN: i8 = 1;

fn code(error: ErrorCode) -> i16 {
    error.code()
}

/// The log directory each broker reports.
pub fn log_dir(node_id: i32) -> String {
    format!("/kafka-wire-fake/broker-{node_id}")
}

/// Elects a leader for one partition as Kafka's controller does: a
/// preferred election moves leadership to the first replica when it runs
/// and does not lead already (ELECTION_NOT_NEEDED when it does,
/// PREFERRED_LEADER_NOT_AVAILABLE when it is stopped); an unclean one is
/// never needed, every partition having a running leader.
fn elect(state: &mut State, live: &[i32], topic: &str, index: i32, kind: i8) -> i16 {
    let Some(partition) = state
        .topics
        .get_mut(topic)
        .and_then(|t| t.partition_mut(index))
    else {
        return code(ErrorCode::UnknownTopicOrPartition);
    };
    let preferred = partition.replicas.first().copied();
    if kind != PREFERRED || preferred == Some(partition.leader) {
        return code(ErrorCode::ElectionNotNeeded);
    }
    match preferred {
        Some(node) if live.contains(&node) => {
            partition.elect(node);
            0
        }
        _ => code(ErrorCode::PreferredLeaderNotAvailable),
    }
}

/// Kafka's message for a partition's election result, where it has one:
/// an election not needed, a topic it does not know.
fn election_message(error_code: i16, topic: &str, known: bool) -> Option<String> {
    if error_code == code(ErrorCode::ElectionNotNeeded) {
        Some("Leader election not needed for topic partition.".to_owned())
    } else if error_code == code(ErrorCode::UnknownTopicOrPartition) && !known {
        Some(format!("No such topic as {topic}"))
    } else {
        None
    }
}

/// ElectLeaders (v0 is always preferred). With no partitions named, every
/// partition is tried and only those an election was needed for are
/// answered, as Kafka answers.
pub fn elect_leaders(cx: &Context<'_>, request: &ElectLeadersRequest<'_>) -> ResponseBody<'static> {
    let kind = if cx.version == 0 {
        PREFERRED
    } else {
        request.election_type
    };
    if kind != PREFERRED && kind != UNCLEAN {
        return ResponseBody::ElectLeaders(ElectLeadersResponse {
            error_code: code(ErrorCode::InvalidRequest),
            ..Default::default()
        });
    }
    let live = cx.shared.node_ids();
    let mut state = cx.shared.state();
    let results: Vec<elect_leaders_response::ReplicaElectionResult<'static>> =
        match &request.topic_partitions {
            Some(topics) => topics
                .iter()
                .map(|t| elect_leaders_response::ReplicaElectionResult {
                    topic: owned(&t.topic),
                    partition_result: t
                        .partitions
                        .iter()
                        .map(|index| {
                            let error_code = elect(&mut state, &live, &t.topic, index, kind);
                            let known = state.topics.get(&t.topic).is_some();
                            let mut result = elect_leaders_response::PartitionResult {
                                partition_id: index,
                                error_code,
                                ..Default::default()
                            };
                            if let Some(message) = election_message(error_code, &t.topic, known) {
                                result.error_message = Some(message.into());
                            }
                            result
                        })
                        .collect::<Vec<_>>()
                        .into(),
                    ..Default::default()
                })
                .collect(),
            None => {
                let mut results = Vec::new();
                for name in state.topics.names() {
                    let count = state.topics.get(&name).map_or(0, |t| t.partition_count());
                    let elected: Vec<_> = (0..count)
                        .filter_map(|index| {
                            let error_code = elect(&mut state, &live, &name, index, kind);
                            (error_code != code(ErrorCode::ElectionNotNeeded)).then_some(
                                elect_leaders_response::PartitionResult {
                                    partition_id: index,
                                    error_code,
                                    ..Default::default()
                                },
                            )
                        })
                        .collect();
                    if !elected.is_empty() {
                        results.push(elect_leaders_response::ReplicaElectionResult {
                            topic: owned(&name),
                            partition_result: elected.into(),
                            ..Default::default()
                        });
                    }
                }
                results
            }
        };
    drop(state);
    cx.shared.appended.notify_waiters();
    ResponseBody::ElectLeaders(ElectLeadersResponse {
        replica_election_results: results.into(),
        ..Default::default()
    })
}

/// Moves one partition to `replicas` (or, `None`, cancels its
/// reassignment, of which none is ever under way), as Kafka's controller
/// checks it: a known topic and partition, replicas that are registered
/// brokers, each once, and with `keep_factor` as many as now.
fn reassign(
    state: &mut State,
    brokers: &[i32],
    live: &[i32],
    topic: &str,
    index: i32,
    replicas: Option<Vec<i32>>,
    keep_factor: bool,
) -> Result<(), (ErrorCode, Option<String>)> {
    let partition = state
        .topics
        .get_mut(topic)
        .ok_or_else(|| {
            (
                ErrorCode::UnknownTopicOrPartition,
                Some(format!("Unable to find a topic named {topic}.")),
            )
        })?
        .partition_mut(index)
        .ok_or_else(|| {
            (
                ErrorCode::UnknownTopicOrPartition,
                Some(format!("Unable to find partition {topic}:{index}.")),
            )
        })?;
    // Kafka answers a cancel with none under way by the code alone.
    let Some(replicas) = replicas else {
        return Err((ErrorCode::NoReassignmentInProgress, None));
    };
    let invalid = |why: String| Err((ErrorCode::InvalidReplicaAssignment, Some(why)));
    if replicas.is_empty() {
        return invalid("The manual partition assignment includes an empty replica list.".into());
    }
    let mut seen = BTreeSet::new();
    for node in &replicas {
        if !brokers.contains(node) {
            return invalid(format!(
                "The manual partition assignment includes broker {node}, but no such broker is registered."
            ));
        }
        if !seen.insert(*node) {
            return invalid(format!(
                "The manual partition assignment includes the broker {node} more than once."
            ));
        }
    }
    if keep_factor && replicas.len() != partition.replicas.len() {
        return Err((
            ErrorCode::InvalidReplicationFactor,
            Some(format!(
                "The replication factor is changed from {} to {}",
                partition.replicas.len(),
                replicas.len()
            )),
        ));
    }
    let leader = partition.leader;
    partition.replicas = replicas;
    if !partition.replicas.contains(&leader) {
        if let Some(node) = partition
            .replicas
            .iter()
            .copied()
            .find(|n| live.contains(n))
        {
            partition.elect(node);
        }
    }
    Ok(())
}

/// AlterPartitionReassignments: each partition moved at once (its new
/// replicas in sync, its leader kept when it stays a replica, else the
/// first running one of them, with the next leader epoch).
pub fn alter_partition_reassignments(
    cx: &Context<'_>,
    request: &AlterPartitionReassignmentsRequest<'_>,
) -> ResponseBody<'static> {
    let keep_factor = cx.version >= 1 && !request.allow_replication_factor_change;
    let brokers: Vec<i32> = cx
        .shared
        .control
        .members()
        .iter()
        .map(|m| m.address.node_id)
        .collect();
    let live = cx.shared.node_ids();
    let mut state = cx.shared.state();
    let responses: Vec<_> = request
        .topics
        .iter()
        .map(
            |t| alter_partition_reassignments_response::ReassignableTopicResponse {
                name: owned(&t.name),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| {
                        let replicas = p.replicas.as_ref().map(|r| r.iter().collect());
                        let (error_code, error_message) = match reassign(
                            &mut state,
                            &brokers,
                            &live,
                            &t.name,
                            p.partition_index,
                            replicas,
                            keep_factor,
                        ) {
                            Ok(()) => (0, None),
                            Err((error, message)) => (error.code(), message.map(Into::into)),
                        };
                        alter_partition_reassignments_response::ReassignablePartitionResponse {
                            partition_index: p.partition_index,
                            error_code,
                            error_message,
                            ..Default::default()
                        }
                    })
                    .collect::<Vec<_>>()
                    .into(),
                ..Default::default()
            },
        )
        .collect();
    drop(state);
    cx.shared.appended.notify_waiters();
    ResponseBody::AlterPartitionReassignments(AlterPartitionReassignmentsResponse {
        allow_replication_factor_change: request.allow_replication_factor_change,
        responses: responses.into(),
        // Kafka's top-level message is null once its controller has
        // answered for some partition ("" for a request of none).
        error_message: if request.topics.is_empty() {
            Some("".into())
        } else {
            None
        },
        ..Default::default()
    })
}

/// ListPartitionReassignments: none is ever under way.
pub fn list_partition_reassignments(
    _cx: &Context<'_>,
    _request: &ListPartitionReassignmentsRequest<'_>,
) -> ResponseBody<'static> {
    ResponseBody::ListPartitionReassignments(ListPartitionReassignmentsResponse {
        error_message: None,
        ..Default::default()
    })
}

/// DescribeLogDirs: this broker's one log directory, with the partitions
/// it holds a replica of (those named, or all), their sizes, no lag; its
/// total bytes are the cluster's byte budget, its usable bytes what the
/// logs leave of it.
pub fn describe_log_dirs(
    cx: &Context<'_>,
    request: &DescribeLogDirsRequest<'_>,
) -> ResponseBody<'static> {
    let wanted: Option<Vec<(String, Vec<i32>)>> = request.topics.as_ref().map(|topics| {
        topics
            .iter()
            .map(|t| (t.topic.to_string(), t.partitions.iter().collect()))
            .collect()
    });
    let state = cx.shared.state();
    let mut topics = Vec::new();
    for name in state.topics.names() {
        let Some(topic) = state.topics.get(&name) else {
            continue;
        };
        let asked = match &wanted {
            None => None,
            Some(wanted) => match wanted.iter().find(|(t, _)| *t == name) {
                Some((_, partitions)) => Some(partitions),
                None => continue,
            },
        };
        let partitions: Vec<_> = topic
            .partitions
            .iter()
            .zip(0..)
            .filter(|(p, index)| {
                p.replicas.contains(&cx.node_id) && asked.is_none_or(|a| a.contains(index))
            })
            .map(
                |(p, index)| describe_log_dirs_response::DescribeLogDirsPartition {
                    partition_index: index,
                    partition_size: i64::try_from(p.log.size()).unwrap_or(i64::MAX),
                    ..Default::default()
                },
            )
            .collect();
        if !partitions.is_empty() {
            topics.push(describe_log_dirs_response::DescribeLogDirsTopic {
                name: owned(&name),
                partitions: partitions.into(),
                ..Default::default()
            });
        }
    }
    let budget = cx.shared.config.max_bytes;
    let total = i64::try_from(budget).unwrap_or(i64::MAX);
    let usable = i64::try_from(budget.saturating_sub(state.topics.bytes())).unwrap_or(i64::MAX);
    ResponseBody::DescribeLogDirs(DescribeLogDirsResponse {
        results: vec![describe_log_dirs_response::DescribeLogDirsResult {
            log_dir: log_dir(cx.node_id).into(),
            topics: topics.into(),
            total_bytes: total,
            usable_bytes: usable,
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    })
}
