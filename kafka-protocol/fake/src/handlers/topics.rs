//! Metadata, DescribeTopicPartitions, CreateTopics, CreatePartitions and
//! DescribeCluster (DeleteTopics has its own module).

use std::collections::BTreeMap;

use kafka_wire::messages::{
    create_partitions_response, create_topics_response, describe_cluster_response,
    describe_topic_partitions_response, metadata_response, CreatePartitionsRequest,
    CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse, DescribeClusterRequest,
    DescribeClusterResponse, DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse,
    MetadataRequest, MetadataResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::config::MAX_AUTO_CREATED_PER_REQUEST;
use crate::config_table;
use crate::dispatch::Context;
use crate::state::topics::{check_assignment, check_topic_name, Placement, Topic};
use crate::state::State;

fn describe(name: &str, topic: &Topic) -> metadata_response::MetadataResponseTopic<'static> {
    metadata_response::MetadataResponseTopic {
        name: Some(owned(name)),
        topic_id: topic.id,
        partitions: topic
            .partitions
            .iter()
            .zip(0..)
            .map(|(p, index)| metadata_response::MetadataResponsePartition {
                partition_index: index,
                leader_id: p.leader,
                leader_epoch: p.leader_epoch,
                replica_nodes: p.replicas.clone().into(),
                isr_nodes: p.replicas.clone().into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Describes the requested topics (all when null), creating unknown ones
/// when the cluster and the client allow it, up to
/// [`MAX_AUTO_CREATED_PER_REQUEST`] per request.
pub fn metadata(cx: &Context<'_>, request: &MetadataRequest<'_>) -> ResponseBody<'static> {
    let shared = cx.shared;
    let mut state = shared.state();
    let nodes = shared.node_ids();
    let create = shared.config.auto_create && (cx.version < 4 || request.allow_auto_topic_creation);
    let mut left = if create {
        MAX_AUTO_CREATED_PER_REQUEST
    } else {
        0
    };
    let names: Option<Vec<(Option<String>, Uuid)>> = match &request.topics {
        Some(topics) if !(cx.version == 0 && topics.is_empty()) => Some(
            topics
                .iter()
                .map(|t| (t.name.as_deref().map(str::to_owned), t.topic_id))
                .collect(),
        ),
        _ => None,
    };
    let topics = match names {
        None => state
            .topics
            .names()
            .iter()
            .filter_map(|name| state.topics.get(name).map(|t| describe(name, t)))
            .collect(),
        Some(wanted) => wanted
            .into_iter()
            .map(|(name, id)| match name {
                None => match state.topics.name_of(id).map(str::to_owned) {
                    Some(name) => state
                        .topics
                        .get(&name)
                        .map(|t| describe(&name, t))
                        .unwrap_or_default(),
                    None => metadata_response::MetadataResponseTopic {
                        error_code: ErrorCode::UnknownTopicId.code(),
                        topic_id: id,
                        ..Default::default()
                    },
                },
                Some(name) => by_name(&mut state, &name, &mut left, create, cx, &nodes),
            })
            .collect(),
    };
    ResponseBody::Metadata(MetadataResponse {
        brokers: shared
            .brokers()
            .iter()
            .map(|b| metadata_response::MetadataResponseBroker {
                node_id: b.node_id,
                host: owned(&b.host),
                port: i32::from(b.port),
                rack: None,
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(owned(&shared.config.cluster_id)),
        controller_id: shared.controller(),
        topics,
        ..Default::default()
    })
}

fn by_name(
    state: &mut State,
    name: &str,
    left: &mut usize,
    create: bool,
    cx: &Context<'_>,
    nodes: &[i32],
) -> metadata_response::MetadataResponseTopic<'static> {
    let error = |code: i16| metadata_response::MetadataResponseTopic {
        error_code: code,
        name: Some(owned(name)),
        ..Default::default()
    };
    if let Some(topic) = state.topics.get(name) {
        return describe(name, topic);
    }
    if let Err(code) = check_topic_name(name) {
        return error(code);
    }
    if !create {
        return error(ErrorCode::UnknownTopicOrPartition.code());
    }
    if *left == 0 {
        // Past the per-request limit: clients retry, as while Kafka
        // creates a topic.
        return error(ErrorCode::LeaderNotAvailable.code());
    }
    *left -= 1;
    let placement = Placement {
        nodes,
        replication_factor: cx.shared.default_replication(),
        assigned: &[],
    };
    match state.topics.create(
        name,
        cx.shared.config.default_partitions,
        BTreeMap::new(),
        placement,
    ) {
        // Kafka answers a topic it just created with LEADER_NOT_AVAILABLE
        // until its leaders are elected; here they are at once.
        Ok(topic) => describe(name, topic),
        Err(code) => error(code),
    }
}

/// Partitions of the requested topics, paged by a cursor and a limit.
pub fn describe_topic_partitions(
    cx: &Context<'_>,
    request: &DescribeTopicPartitionsRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let mut names: Vec<String> = if request.topics.is_empty() {
        state.topics.names()
    } else {
        let mut names: Vec<String> = request.topics.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names.dedup();
        names
    };
    let (cursor_topic, cursor_partition) =
        request.cursor.as_ref().map_or((String::new(), 0), |c| {
            (c.topic_name.to_string(), c.partition_index)
        });
    names.retain(|n| *n >= cursor_topic);
    let mut limit =
        usize::try_from(request.response_partition_limit.clamp(1, 2000)).unwrap_or(2000);
    let mut topics = Vec::new();
    let mut next_cursor = None;
    for name in names {
        let Some(topic) = state.topics.get(&name) else {
            topics.push(
                describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic {
                    error_code: ErrorCode::UnknownTopicOrPartition.code(),
                    name: Some(owned(&name)),
                    ..Default::default()
                },
            );
            continue;
        };
        if limit == 0 {
            next_cursor = Some(describe_topic_partitions_response::Cursor {
                topic_name: owned(&name),
                partition_index: 0,
                ..Default::default()
            });
            break;
        }
        let start = if name == cursor_topic {
            cursor_partition.max(0)
        } else {
            0
        };
        let mut partitions = Vec::new();
        for (p, index) in topic
            .partitions
            .iter()
            .zip(0..)
            .skip(usize::try_from(start).unwrap_or(0))
        {
            if limit == 0 {
                next_cursor = Some(describe_topic_partitions_response::Cursor {
                    topic_name: owned(&name),
                    partition_index: index,
                    ..Default::default()
                });
                break;
            }
            limit -= 1;
            partitions.push(
                describe_topic_partitions_response::DescribeTopicPartitionsResponsePartition {
                    partition_index: index,
                    leader_id: p.leader,
                    leader_epoch: p.leader_epoch,
                    replica_nodes: p.replicas.clone().into(),
                    isr_nodes: p.replicas.clone().into(),
                    eligible_leader_replicas: Some(Vec::new().into()),
                    last_known_elr: Some(Vec::new().into()),
                    ..Default::default()
                },
            );
        }
        topics.push(
            describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic {
                name: Some(owned(&name)),
                topic_id: topic.id,
                partitions: partitions.into(),
                ..Default::default()
            },
        );
        if next_cursor.is_some() {
            break;
        }
    }
    ResponseBody::DescribeTopicPartitions(DescribeTopicPartitionsResponse {
        topics: topics.into(),
        next_cursor,
        ..Default::default()
    })
}

/// Creates topics (-1 partitions or replication factor: the defaults).
pub fn create_topics(cx: &Context<'_>, request: &CreateTopicsRequest<'_>) -> ResponseBody<'static> {
    let shared = cx.shared;
    let nodes = shared.node_ids();
    let mut state = shared.state();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let manual = !t.assignments.is_empty();
            let mut partitions = if t.num_partitions == -1 {
                shared.config.default_partitions
            } else {
                t.num_partitions
            };
            let mut replication = if t.replication_factor == -1 {
                i16::try_from(shared.default_replication()).unwrap_or(1)
            } else {
                t.replication_factor
            };
            let mut configs = BTreeMap::new();
            let mut result: Result<(), (i16, String)> = Ok(());
            for c in t.configs.iter() {
                if let Err(refusal) = config_table::check_topic(&c.name, c.value.as_deref()) {
                    result = result.and(Err(refusal));
                }
                if let Some(value) = &c.value {
                    configs.insert(c.name.to_string(), value.to_string());
                }
            }
            let mut assigned = Vec::new();
            if manual {
                let invalid = ErrorCode::InvalidRequest.code();
                if t.replication_factor != -1 {
                    result = result.and(Err((invalid, "A manual partition assignment was specified, but replication factor was not set to -1.".into())));
                } else if t.num_partitions != -1 {
                    result = result.and(Err((invalid, "A manual partition assignment was specified, but numPartitions was not set to -1.".into())));
                }
                let given: Vec<(i32, Vec<i32>)> = t
                    .assignments
                    .iter()
                    .map(|a| (a.partition_index, a.broker_ids.to_vec()))
                    .collect();
                match result.clone().and_then(|()| check_assignment(&given, &nodes)) {
                    Ok(replicas) => {
                        partitions = i32::try_from(replicas.len()).unwrap_or(i32::MAX);
                        replication = replicas
                            .first()
                            .and_then(|r| i16::try_from(r.len()).ok())
                            .unwrap_or(1);
                        assigned = replicas;
                    }
                    Err(refusal) => result = result.and(Err(refusal)),
                }
            } else if replication < 1
                || usize::try_from(replication).unwrap_or(usize::MAX) > nodes.len()
            {
                result = result.and(Err((
                    ErrorCode::InvalidReplicationFactor.code(),
                    format!(
                        "Unable to replicate the partition {replication} time(s): The target replication factor of {replication} cannot be reached because only {} broker(s) are registered.",
                        nodes.len()
                    ),
                )));
            }
            let created = result.and_then(|()| {
                // Validate-only answers the id the topic would have, as Kafka.
                let outcome = if request.validate_only {
                    state
                        .topics
                        .check_create(&t.name, partitions)
                        .map(|()| state.topics.fresh_id(&t.name).0)
                } else {
                    let placement = Placement {
                        nodes: &nodes,
                        replication_factor: usize::try_from(replication).unwrap_or(1),
                        assigned: &assigned,
                    };
                    state
                        .topics
                        .create(&t.name, partitions, configs, placement)
                        .map(|topic| topic.id)
                };
                outcome.map_err(|code| (code, String::new()))
            });
            let (error_code, error_message, topic_id) = match created {
                Ok(id) => (0, None, id),
                Err((code, message)) => (code, (!message.is_empty()).then_some(message), Uuid::ZERO),
            };
            create_topics_response::CreatableTopicResult {
                name: owned(&t.name),
                topic_id,
                error_code,
                error_message: error_message.map(Into::into),
                num_partitions: if error_code == 0 { partitions } else { -1 },
                replication_factor: if error_code == 0 { replication } else { -1 },
                configs: (error_code == 0).then(Default::default),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::CreateTopics(CreateTopicsResponse {
        topics,
        ..Default::default()
    })
}

/// Grows topics.
pub fn create_partitions(
    cx: &Context<'_>,
    request: &CreatePartitionsRequest<'_>,
) -> ResponseBody<'static> {
    let nodes = cx.shared.node_ids();
    let mut state = cx.shared.state();
    let results = request
        .topics
        .iter()
        .map(|t| {
            let result = if t.assignments.is_some() {
                Err(ErrorCode::InvalidReplicaAssignment.code())
            } else {
                state
                    .topics
                    .grow(&t.name, t.count, &nodes, !request.validate_only)
            };
            create_partitions_response::CreatePartitionsTopicResult {
                name: owned(&t.name),
                error_code: result.err().unwrap_or(0),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::CreatePartitions(CreatePartitionsResponse {
        results,
        ..Default::default()
    })
}

/// Every broker, and the controller (the first).
pub fn describe_cluster(
    cx: &Context<'_>,
    request: &DescribeClusterRequest<'_>,
) -> ResponseBody<'static> {
    let shared = cx.shared;
    ResponseBody::DescribeCluster(DescribeClusterResponse {
        cluster_id: owned(&shared.config.cluster_id),
        controller_id: shared.controller(),
        endpoint_type: request.endpoint_type,
        brokers: shared
            .brokers()
            .iter()
            .map(|b| describe_cluster_response::DescribeClusterBroker {
                broker_id: b.node_id,
                host: owned(&b.host),
                port: i32::from(b.port),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    })
}
