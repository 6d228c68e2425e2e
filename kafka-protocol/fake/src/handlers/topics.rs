//! CreateTopics, DeleteTopics and CreatePartitions (Metadata,
//! DescribeTopicPartitions and DescribeCluster are in
//! [`metadata`](super::metadata)).

use std::collections::BTreeMap;

use kafka_wire::messages::{
    create_partitions_response, create_topics_response, delete_topics_response,
    CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::dispatch::Context;
use crate::state::topics::{check_config, Placement};

/// Creates topics (-1 partitions or replication factor: the defaults).
pub fn create_topics(cx: &Context<'_>, request: &CreateTopicsRequest<'_>) -> ResponseBody<'static> {
    let shared = cx.shared;
    let nodes = shared.node_ids();
    let mut state = shared.state();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = if t.num_partitions == -1 {
                shared.config.default_partitions
            } else {
                t.num_partitions
            };
            let replication = if t.replication_factor == -1 {
                i16::try_from(shared.default_replication()).unwrap_or(1)
            } else {
                t.replication_factor
            };
            let mut configs = BTreeMap::new();
            let mut result = Ok(());
            for c in t.configs.iter() {
                if let Err(code) = check_config(&c.name, c.value.as_deref()) {
                    result = Err(code);
                }
                if let Some(value) = &c.value {
                    configs.insert(c.name.to_string(), value.to_string());
                }
            }
            if replication < 1 || usize::try_from(replication).unwrap_or(usize::MAX) > nodes.len() {
                result = result.and(Err(ErrorCode::InvalidReplicationFactor.code()));
            }
            if !t.assignments.is_empty() {
                result = result.and(Err(ErrorCode::InvalidReplicaAssignment.code()));
            }
            let created = result.and_then(|()| {
                if request.validate_only {
                    state
                        .topics
                        .check_create(&t.name, partitions)
                        .map(|()| Uuid::ZERO)
                } else {
                    let placement = Placement {
                        nodes: &nodes,
                        replication_factor: usize::try_from(replication).unwrap_or(1),
                    };
                    state
                        .topics
                        .create(&t.name, partitions, configs, placement)
                        .map(|topic| topic.id)
                }
            });
            let (error_code, topic_id) = match created {
                Ok(id) => (0, id),
                Err(code) => (code, Uuid::ZERO),
            };
            create_topics_response::CreatableTopicResult {
                name: owned(&t.name),
                topic_id,
                error_code,
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

/// Deletes topics: by name before v6, by name or id from v6.
pub fn delete_topics(cx: &Context<'_>, request: &DeleteTopicsRequest<'_>) -> ResponseBody<'static> {
    let mut state = cx.shared.state();
    let wanted: Vec<(Option<String>, Uuid)> = if cx.version >= 6 {
        request
            .topics
            .iter()
            .map(|t| (t.name.as_deref().map(str::to_owned), t.topic_id))
            .collect()
    } else {
        request
            .topic_names
            .iter()
            .map(|n| (Some(n.to_string()), Uuid::ZERO))
            .collect()
    };
    let responses = wanted
        .into_iter()
        .map(|(name, id)| {
            let resolved = match &name {
                Some(name) => Ok(name.clone()),
                None => state
                    .topics
                    .name_of(id)
                    .map(str::to_owned)
                    .ok_or(ErrorCode::UnknownTopicId.code()),
            };
            let deleted = resolved.and_then(|n| state.topics.delete(&n));
            let (name, topic_id, error_code) = match deleted {
                Ok((name, id)) => {
                    state.groups.forget_topic(&name);
                    (Some(name), id, 0)
                }
                Err(code) => (name, id, code),
            };
            delete_topics_response::DeletableTopicResult {
                name: name.map(Into::into),
                topic_id,
                error_code,
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::DeleteTopics(DeleteTopicsResponse {
        responses,
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
