//! Streams groups (KIP-1071): StreamsGroupHeartbeat (join, heartbeat,
//! leave; the topology, the tasks assigned by the coordinator, and the
//! internal topics the broker creates), StreamsGroupDescribe, and
//! StreamsGroupTopologyDescriptionUpdate, which a broker without a
//! topology description plugin (Kafka's default, and the fake) refuses.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use kafka_wire::messages::{
    streams_group_describe_response as describe_response,
    streams_group_heartbeat_request as heartbeat_request,
    streams_group_heartbeat_response as heartbeat_response, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
    StreamsGroupTopologyDescriptionUpdateRequest, StreamsGroupTopologyDescriptionUpdateResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::config_table;
use crate::dispatch::Context;
use crate::state::streams_groups::beat::{Beat, BeatAnswer, LEAVE_GROUP_STATIC_MEMBER_EPOCH};
use crate::state::streams_groups::configure::InternalTopic;
use crate::state::streams_groups::member::StreamsMember;
use crate::state::streams_groups::tasks::{by_subtopology, TaskId, TaskSets};
use crate::state::streams_groups::topology::{CopartitionGroup, Subtopology, TopicInfo, Topology};
use crate::state::streams_groups::{StreamsGroup, ASSIGNOR};
use crate::state::topics::Placement;
use crate::state::State;

/// The topology of a request, in the state's terms.
fn topology(request: &heartbeat_request::Topology<'_>) -> Topology {
    let info = |t: &heartbeat_request::TopicInfo<'_>| TopicInfo {
        name: t.name.to_string(),
        partitions: t.partitions,
        replication_factor: t.replication_factor,
        configs: t
            .topic_configs
            .iter()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect(),
    };
    let subtopologies = request
        .subtopologies
        .iter()
        .map(|s| Subtopology {
            id: s.subtopology_id.to_string(),
            source_topics: s.source_topics.iter().map(|t| t.to_string()).collect(),
            source_topic_regex: s.source_topic_regex.iter().map(|t| t.to_string()).collect(),
            state_changelog_topics: s.state_changelog_topics.iter().map(|t| info(&t)).collect(),
            repartition_sink_topics: s
                .repartition_sink_topics
                .iter()
                .map(|t| t.to_string())
                .collect(),
            repartition_source_topics: s
                .repartition_source_topics
                .iter()
                .map(|t| info(&t))
                .collect(),
            copartition_groups: s
                .copartition_groups
                .iter()
                .map(|g| CopartitionGroup {
                    source_topics: g.source_topics.iter().collect(),
                    source_topic_regex: g.source_topic_regex.iter().collect(),
                    repartition_source_topics: g.repartition_source_topics.iter().collect(),
                })
                .collect(),
        })
        .map(|s| (s.id.clone(), s))
        .collect();
    Topology {
        epoch: request.epoch,
        subtopologies,
    }
}

fn task_set(
    list: &kafka_wire::runtime::StructArray<'_, heartbeat_request::TaskIds<'_>>,
) -> BTreeSet<TaskId> {
    list.iter()
        .flat_map(|t| {
            let id = t.subtopology_id.to_string();
            t.partitions
                .iter()
                .map(|p| (id.clone(), p))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn invalid(message: impl Into<String>) -> (i16, String) {
    (ErrorCode::InvalidRequest.code(), message.into())
}

/// Kafka's checks of a heartbeat before the coordinator sees it, in its
/// order: the topology's topic names (the broker's), source topic patterns
/// (not supported), then the request's fields.
fn check(
    request: &StreamsGroupHeartbeatRequest<'_>,
    topology: Option<&Topology>,
) -> Result<(), (i16, String)> {
    if let Some(topology) = topology {
        topology.check_names()?;
        if topology
            .subtopologies
            .values()
            .any(|s| !s.source_topic_regex.is_empty())
        {
            return Err(invalid(
                "Regular expressions for source topics are not supported yet.",
            ));
        }
    }
    let empty = |value: Option<&str>, message: &str| -> Result<(), (i16, String)> {
        match value {
            Some(v) if v.trim().is_empty() => Err(invalid(message)),
            _ => Ok(()),
        }
    };
    empty(Some(&request.member_id), "MemberId can't be empty.")?;
    empty(Some(&request.group_id), "GroupId can't be empty.")?;
    empty(request.instance_id.as_deref(), "InstanceId can't be empty.")?;
    empty(request.rack_id.as_deref(), "RackId can't be empty.")?;
    let epoch = request.member_epoch;
    if epoch == 0 {
        if request.rebalance_timeout_ms == -1 {
            return Err(invalid(
                "RebalanceTimeoutMs must be provided in first request.",
            ));
        }
        let not_empty = |list: &Option<_>| {
            list.as_ref().is_some_and(
                |l: &kafka_wire::runtime::StructArray<'_, heartbeat_request::TaskIds<'_>>| {
                    !l.is_empty()
                },
            )
        };
        if not_empty(&request.active_tasks) {
            return Err(invalid("ActiveTasks must be empty when (re-)joining."));
        }
        if not_empty(&request.standby_tasks) {
            return Err(invalid("StandbyTasks must be empty when (re-)joining."));
        }
        if not_empty(&request.warmup_tasks) {
            return Err(invalid("WarmupTasks must be empty when (re-)joining."));
        }
        let Some(topology) = topology else {
            return Err(invalid("Topology must be non-null when (re-)joining."));
        };
        for subtopology in topology.subtopologies.values() {
            for changelog in &subtopology.state_changelog_topics {
                if changelog.partitions != 0 {
                    return Err((
                        ErrorCode::StreamsInvalidTopology.code(),
                        format!(
                            "Changelog topic {} must have an undefined partition count, but it is set to {}.",
                            changelog.name, changelog.partitions
                        ),
                    ));
                }
            }
        }
    } else if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH {
        if request.instance_id.is_none() {
            return Err(invalid("InstanceId can't be null."));
        }
    } else if epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH {
        return Err(invalid(format!(
            "MemberEpoch is {epoch}, but must be greater than or equal to -2."
        )));
    }
    let given = [
        request.active_tasks.is_some(),
        request.standby_tasks.is_some(),
        request.warmup_tasks.is_some(),
    ];
    if given.iter().any(|g| *g) && !given.iter().all(|g| *g) {
        return Err(invalid(
            "If one task-type is non-null, all must be non-null.",
        ));
    }
    if epoch != 0 && topology.is_some() {
        return Err(invalid("Topology can only be provided when (re-)joining."));
    }
    Ok(())
}

/// Creates the internal topics a heartbeat found missing, as the broker
/// does on the coordinator's behalf (a topic another request created
/// meanwhile is left alone; an invalid config is dropped, as Kafka would
/// refuse the creation instead).
fn create_internal_topics(
    cx: &Context<'_>,
    state: &mut State,
    to_create: &[(String, InternalTopic)],
) {
    let nodes = cx.shared.node_ids();
    for (name, topic) in to_create {
        if state.topics.get(name).is_some() {
            continue;
        }
        let replication = match topic.replication_factor {
            Some(factor) if factor > 0 => usize::try_from(factor).unwrap_or(1).min(nodes.len()),
            _ => cx.shared.default_replication(),
        };
        let configs: BTreeMap<String, String> = topic
            .configs
            .iter()
            .filter(|(k, v)| config_table::check_topic(k, Some(v)).is_ok())
            .cloned()
            .collect();
        let placement = Placement {
            nodes: &nodes,
            replication_factor: replication.max(1),
            assigned: &[],
        };
        let _ = state
            .topics
            .create(name, topic.partitions, configs, placement);
    }
}

fn task_ids(tasks: &mut dyn Iterator<Item = &TaskId>) -> Vec<heartbeat_response::TaskIds<'static>> {
    by_subtopology(tasks, |subtopology, partitions| {
        heartbeat_response::TaskIds {
            subtopology_id: owned(subtopology),
            partitions: partitions.into(),
            ..Default::default()
        }
    })
}

/// The answer at `version`: v0 gives the acceptable recovery lag as an
/// int32, v1+ as an int64.
fn response(answer: BeatAnswer, version: i16) -> StreamsGroupHeartbeatResponse<'static> {
    let (error_code, error_message) = match answer.error {
        Some((code, message)) => (code, Some(Cow::Owned(message))),
        None => (0, None),
    };
    let assignment = answer.assignment.as_ref();
    let endpoint = |(host, port): &(String, u16)| heartbeat_response::Endpoint {
        host: owned(host),
        port: *port,
        ..Default::default()
    };
    let partitions = |list: &[(String, Vec<i32>)]| {
        list.iter()
            .map(|(topic, partitions)| heartbeat_response::TopicPartition {
                topic: owned(topic),
                partitions: partitions.clone().into(),
                ..Default::default()
            })
            .collect::<Vec<_>>()
            .into()
    };
    StreamsGroupHeartbeatResponse {
        error_code,
        error_message,
        member_id: Cow::Owned(answer.member_id),
        member_epoch: answer.member_epoch,
        heartbeat_interval_ms: answer.heartbeat_interval_ms,
        // A refusal leaves v0's int32 at its default, 0, as Kafka's does.
        acceptable_recovery_lag_legacy: if version == 0 && error_code == 0 {
            i32::try_from(answer.acceptable_recovery_lag).unwrap_or(i32::MAX)
        } else {
            0
        },
        task_offset_interval_ms: answer.task_offset_interval_ms,
        acceptable_recovery_lag: if version == 0 {
            -1
        } else {
            answer.acceptable_recovery_lag
        },
        status: Some(
            answer
                .statuses
                .into_iter()
                .map(|(status_code, detail)| heartbeat_response::Status {
                    status_code,
                    status_detail: Cow::Owned(detail),
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into(),
        ),
        active_tasks: assignment.map(|t| task_ids(&mut t.active.keys()).into()),
        standby_tasks: assignment.map(|t| task_ids(&mut t.standby.iter()).into()),
        warmup_tasks: assignment.map(|t| task_ids(&mut t.warmup.iter()).into()),
        endpoint_information_epoch: answer.endpoint_information_epoch,
        partitions_by_user_endpoint: answer.partitions_by_endpoint.map(|list| {
            list.iter()
                .map(|e| heartbeat_response::EndpointToPartitions {
                    user_endpoint: endpoint(&e.endpoint),
                    active_partitions: partitions(&e.active),
                    standby_partitions: partitions(&e.standby),
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into()
        }),
        ..Default::default()
    }
}

/// StreamsGroupHeartbeat, at the group's coordinator.
pub fn heartbeat(
    cx: &Context<'_>,
    request: &StreamsGroupHeartbeatRequest<'_>,
) -> ResponseBody<'static> {
    let topology = request.topology.as_ref().map(topology);
    if let Err((code, message)) = check(request, topology.as_ref()) {
        return ResponseBody::StreamsGroupHeartbeat(response(
            BeatAnswer::failed(code, message),
            cx.version,
        ));
    }
    if cx.shared.coordinator(&request.group_id) != cx.node_id {
        let mut answer = response(
            BeatAnswer::failed(ErrorCode::NotCoordinator.code(), ""),
            cx.version,
        );
        answer.error_message = None;
        return ResponseBody::StreamsGroupHeartbeat(answer);
    }
    let owned_tasks = match (
        &request.active_tasks,
        &request.standby_tasks,
        &request.warmup_tasks,
    ) {
        (Some(active), Some(standby), Some(warmup)) => Some(TaskSets {
            active: task_set(active),
            standby: task_set(standby),
            warmup: task_set(warmup),
        }),
        _ => None,
    };
    let offsets =
        |list: &Option<kafka_wire::runtime::StructArray<'_, heartbeat_request::TaskOffset<'_>>>| {
            list.as_ref().map(|l| {
                l.iter()
                    .map(|o| (o.subtopology_id.to_string(), o.partition, o.offset))
                    .collect()
            })
        };
    let client_host = format!("/{}", cx.client_host);
    let beat = Beat {
        member_id: &request.member_id,
        member_epoch: request.member_epoch,
        endpoint_information_epoch: request.endpoint_information_epoch,
        instance_id: request.instance_id.as_deref(),
        rack_id: request.rack_id.as_deref(),
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        topology,
        owned: owned_tasks,
        process_id: request.process_id.as_deref(),
        user_endpoint: request
            .user_endpoint
            .as_ref()
            .map(|e| (e.host.to_string(), e.port)),
        client_tags: request.client_tags.as_ref().map(|tags| {
            tags.iter()
                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                .collect()
        }),
        task_offsets: offsets(&request.task_offsets),
        task_end_offsets: offsets(&request.task_end_offsets),
        shutdown_application: request.shutdown_application,
        client_id: cx.client_id,
        client_host: &client_host,
    };
    let mut guard = cx.shared.state();
    let state = &mut *guard;
    let answer = state.groups.streams_heartbeat(
        &request.group_id,
        beat,
        &state.topics,
        &cx.shared.config.streams,
        Instant::now(),
    );
    // The broker creates what the coordinator found missing; the answer
    // still says they were missing, as Kafka's does.
    if !answer.to_create.is_empty() {
        let to_create = answer.to_create.clone();
        create_internal_topics(cx, state, &to_create);
    }
    ResponseBody::StreamsGroupHeartbeat(response(answer, cx.version))
}

fn describe_tasks(
    tasks: &mut dyn Iterator<Item = &TaskId>,
) -> Vec<describe_response::TaskIds<'static>> {
    by_subtopology(tasks, |subtopology, partitions| {
        describe_response::TaskIds {
            subtopology_id: owned(subtopology),
            partitions: partitions.into(),
            ..Default::default()
        }
    })
}

fn describe_assignment(sets: &TaskSets) -> describe_response::Assignment<'static> {
    describe_response::Assignment {
        active_tasks: describe_tasks(&mut sets.active.iter()).into(),
        standby_tasks: describe_tasks(&mut sets.standby.iter()).into(),
        warmup_tasks: describe_tasks(&mut sets.warmup.iter()).into(),
        ..Default::default()
    }
}

fn key_values(pairs: &[(String, String)]) -> Vec<describe_response::KeyValue<'static>> {
    pairs
        .iter()
        .map(|(k, v)| describe_response::KeyValue {
            key: owned(k),
            value: owned(v),
            ..Default::default()
        })
        .collect()
}

/// The topology as StreamsGroupDescribe gives it: configured (partition
/// counts decided) once ready, else as the member sent it.
fn describe_topology(group: &StreamsGroup) -> Option<describe_response::Topology<'static>> {
    let topology = group.topology.as_ref()?;
    let ready = group
        .configured
        .as_ref()
        .filter(|c| c.is_ready())
        .and_then(|c| c.subtopologies.as_ref());
    let subtopologies = topology
        .subtopologies
        .values()
        .map(|s| {
            let configured = ready.and_then(|r| r.get(&s.id));
            let infos = |sent: &[TopicInfo], decided: Option<&BTreeMap<String, InternalTopic>>| {
                match decided {
                    Some(decided) => decided
                        .iter()
                        .map(|(name, t)| {
                            let mut configs = t.configs.clone();
                            configs.sort();
                            describe_response::TopicInfo {
                                name: owned(name),
                                partitions: t.partitions,
                                replication_factor: t.replication_factor.unwrap_or(0),
                                topic_configs: key_values(&configs).into(),
                                ..Default::default()
                            }
                        })
                        .collect::<Vec<_>>(),
                    None => sent
                        .iter()
                        .map(|t| describe_response::TopicInfo {
                            name: owned(&t.name),
                            partitions: t.partitions,
                            replication_factor: t.replication_factor,
                            topic_configs: key_values(&t.configs).into(),
                            ..Default::default()
                        })
                        .collect(),
                }
            };
            let mut sources: Vec<&String> = s.source_topics.iter().collect();
            let mut sinks: Vec<&String> = s.repartition_sink_topics.iter().collect();
            if configured.is_some() {
                sources.sort();
                sinks.sort();
            }
            describe_response::Subtopology {
                subtopology_id: owned(&s.id),
                source_topics: sources.into_iter().map(|t| owned(t)).collect(),
                repartition_sink_topics: sinks.into_iter().map(|t| owned(t)).collect(),
                state_changelog_topics: infos(
                    &s.state_changelog_topics,
                    configured.map(|c| &c.changelogs),
                )
                .into(),
                repartition_source_topics: infos(
                    &s.repartition_source_topics,
                    configured.map(|c| &c.repartition_sources),
                )
                .into(),
                ..Default::default()
            }
        })
        .collect::<Vec<_>>();
    Some(describe_response::Topology {
        epoch: topology.epoch,
        subtopologies: Some(subtopologies.into()),
        ..Default::default()
    })
}

fn describe_member(group: &StreamsGroup, m: &StreamsMember) -> describe_response::Member<'static> {
    let offsets = |list: &[(String, i32, i64)]| {
        list.iter()
            .map(|(s, p, o)| describe_response::TaskOffset {
                subtopology_id: owned(s),
                partition: *p,
                offset: *o,
                ..Default::default()
            })
            .collect::<Vec<_>>()
            .into()
    };
    let tags: Vec<(String, String)> = m
        .client_tags
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    describe_response::Member {
        member_id: owned(&m.id),
        member_epoch: m.epoch,
        instance_id: m.instance_id.as_deref().map(owned),
        rack_id: m.rack_id.as_deref().map(owned),
        client_id: owned(&m.client_id),
        client_host: owned(&m.client_host),
        topology_epoch: m.topology_epoch,
        process_id: owned(&m.process_id),
        user_endpoint: m
            .user_endpoint
            .as_ref()
            .map(|(host, port)| describe_response::Endpoint {
                host: owned(host),
                port: *port,
                ..Default::default()
            }),
        client_tags: key_values(&tags).into(),
        task_offsets: offsets(&m.task_offsets),
        task_end_offsets: offsets(&m.task_end_offsets),
        assignment: describe_assignment(&m.assigned.sets()),
        target_assignment: describe_assignment(
            &group.target.get(&m.id).cloned().unwrap_or_default(),
        ),
        is_classic: false,
        ..Default::default()
    }
}

/// StreamsGroupDescribe: each group's epochs, topology and members.
pub fn describe(
    cx: &Context<'_>,
    request: &StreamsGroupDescribeRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let groups = request
        .group_ids
        .iter()
        .map(|group_id| {
            let mut out = describe_response::DescribedGroup {
                group_id: owned(group_id),
                authorized_operations: i32::MIN,
                ..Default::default()
            };
            if cx.shared.coordinator(group_id) != cx.node_id {
                out.error_code = ErrorCode::NotCoordinator.code();
                return out;
            }
            let group = state.groups.get(group_id);
            let Some(streams) = group.and_then(|g| g.streams.as_ref()) else {
                out.error_code = ErrorCode::GroupIdNotFound.code();
                out.error_message = Some(Cow::Owned(match group {
                    None => format!("Group {group_id} not found."),
                    Some(_) => format!("Group {group_id} is not a streams group."),
                }));
                return out;
            };
            out.group_state = Cow::Borrowed(streams.state_name());
            out.group_epoch = streams.epoch;
            out.assignment_epoch = streams.assignment_epoch;
            out.topology = describe_topology(streams);
            out.members = streams
                .members
                .values()
                .map(|m| describe_member(streams, m))
                .collect::<Vec<_>>()
                .into();
            out.assignor_name = Some(Cow::Borrowed(ASSIGNOR));
            out
        })
        .collect::<Vec<_>>();
    ResponseBody::StreamsGroupDescribe(StreamsGroupDescribeResponse {
        groups: groups.into(),
        ..Default::default()
    })
}

/// StreamsGroupTopologyDescriptionUpdate: refused as Kafka 4.4.0 refuses
/// it without a `group.streams.topology.description.plugin`, before any
/// other check.
pub fn topology_description_update(
    _cx: &Context<'_>,
    _request: &StreamsGroupTopologyDescriptionUpdateRequest<'_>,
) -> ResponseBody<'static> {
    ResponseBody::StreamsGroupTopologyDescriptionUpdate(
        StreamsGroupTopologyDescriptionUpdateResponse {
            error_code: ErrorCode::UnsupportedVersion.code(),
            error_message: Some(Cow::Borrowed(
                "The broker has no streams group topology description plugin configured.",
            )),
            ..Default::default()
        },
    )
}
