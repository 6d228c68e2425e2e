//! CreateTopics and CreatePartitions (Metadata, DescribeTopicPartitions
//! and DescribeCluster are in [`metadata`](super::metadata), DeleteTopics
//! in [`delete_topics`](super::delete_topics)).

use std::collections::BTreeMap;

use kafka_wire::messages::{
    create_partitions_response, create_topics_response, CreatePartitionsRequest,
    CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::configs::new_topic_configs;
use super::error_messages::create_topic_message;
use super::owned;
use crate::config_table;
use crate::dispatch::Context;
use crate::state::topics::{check_assignment, Placement};

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
            let listed = new_topic_configs(cx, &state, &configs);
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
                outcome.map_err(|code| {
                    let message = create_topic_message(code, &t.name, partitions);
                    (code, message.unwrap_or_default())
                })
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
                // Kafka lists every config of a topic it creates (or
                // would), and none of one it refuses: empty, not null.
                configs: Some(if error_code == 0 {
                    listed
                        .into_iter()
                        .map(|(name, value, config_source, read_only, is_sensitive)| {
                            create_topics_response::CreatableTopicConfigs {
                                name: name.into(),
                                value: value.map(Into::into),
                                read_only,
                                config_source,
                                is_sensitive,
                                ..Default::default()
                            }
                        })
                        .collect::<Vec<_>>()
                        .into()
                } else {
                    Default::default()
                }),
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
            let current = state.topics.get(&t.name).map(|topic| topic.partition_count());
            let result = if t.assignments.is_some() {
                Err(ErrorCode::InvalidReplicaAssignment.code())
            } else {
                state
                    .topics
                    .grow(&t.name, t.count, &nodes, !request.validate_only)
            };
            let error_code = result.err().unwrap_or(0);
            // Kafka's words for a count that adds no partition.
            let error_message = match current {
                Some(current) if error_code == ErrorCode::InvalidPartitions.code() => {
                    if t.count == current {
                        Some(format!("Topic already has {current} partition(s)."))
                    } else if t.count < current {
                        Some(format!(
                            "The topic {} currently has {current} partition(s); {} would not be an increase.",
                            t.name, t.count
                        ))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            create_partitions_response::CreatePartitionsTopicResult {
                name: owned(&t.name),
                error_code,
                error_message: error_message.map(Into::into),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::CreatePartitions(CreatePartitionsResponse {
        results,
        ..Default::default()
    })
}
