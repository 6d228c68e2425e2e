//! Metadata, DescribeCluster, CreateTopics and DeleteTopics: one broker,
//! leader of every partition, with topics created on demand.

use kafka_wire::messages::{
    create_topics_response, delete_topics_response, describe_cluster_response, metadata_response,
    CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    DescribeClusterRequest, DescribeClusterResponse, MetadataRequest, MetadataResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::ResponseBody;

use super::strings::owned;
use crate::broker::{Broker, NODE_ID};
use crate::errors;
use crate::log::{check_topic_name, Log};

/// The most topics one Metadata request may create. Further unknown topics
/// get LEADER_NOT_AVAILABLE, which clients retry, as they do while Kafka
/// creates a topic; so a request naming thousands of new topics cannot make
/// the broker create them all at once.
pub const MAX_AUTO_CREATED_PER_REQUEST: usize = 100;

/// Describes the requested topics (all when the list is null), creating
/// unknown ones when the client allows it (always before v4), up to
/// [`MAX_AUTO_CREATED_PER_REQUEST`] per request.
pub fn metadata(
    broker: &Broker,
    request: &MetadataRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let mut log = broker.log();
    let auto_create = version < 4 || request.allow_auto_topic_creation;
    let mut creations_left = auto_create.then_some(MAX_AUTO_CREATED_PER_REQUEST);
    let topics = match &request.topics {
        // Before v1 an empty list means all topics.
        Some(topics) if !(version == 0 && topics.is_empty()) => topics
            .iter()
            .map(|t| match &t.name {
                Some(name) => describe_by_name(&mut log, name, &mut creations_left, broker),
                None => describe_by_id(&log, t.topic_id),
            })
            .collect(),
        _ => log
            .topic_names()
            .iter()
            .map(|name| describe_by_name(&mut log, name, &mut None, broker))
            .collect(),
    };
    ResponseBody::Metadata(MetadataResponse {
        brokers: vec![metadata_response::MetadataResponseBroker {
            node_id: NODE_ID,
            host: broker.host().into(),
            port: broker.port(),
            rack: None,
            ..Default::default()
        }]
        .into(),
        cluster_id: Some(owned(&broker.config.cluster_id)),
        controller_id: NODE_ID,
        topics,
        ..Default::default()
    })
}

/// Describes one topic, creating it if it is unknown and `creations_left`
/// allows it (`None`: creating is not allowed; `Some(0)`: not in this
/// request any more).
fn describe_by_name(
    log: &mut Log,
    name: &str,
    creations_left: &mut Option<usize>,
    broker: &Broker,
) -> metadata_response::MetadataResponseTopic<'static> {
    let unknown = |error_code| metadata_response::MetadataResponseTopic {
        error_code,
        name: Some(owned(name)),
        ..Default::default()
    };
    if let Err(code) = check_topic_name(name) {
        return unknown(code);
    }
    if let Some(topic) = log.topic(name) {
        return describe(name, topic.id, topic.partition_count());
    }
    match creations_left {
        None => return unknown(errors::UNKNOWN_TOPIC_OR_PARTITION),
        Some(0) => return unknown(errors::LEADER_NOT_AVAILABLE),
        Some(left) => *left -= 1,
    }
    match log.create(name, broker.config.default_partitions) {
        Ok(topic) => describe(name, topic.id, topic.partition_count()),
        Err(code) => unknown(code),
    }
}

fn describe_by_id(log: &Log, id: Uuid) -> metadata_response::MetadataResponseTopic<'static> {
    match log.topic_by_id(id) {
        Some((name, topic)) => describe(name, topic.id, topic.partition_count()),
        None => metadata_response::MetadataResponseTopic {
            error_code: errors::UNKNOWN_TOPIC_ID,
            topic_id: id,
            ..Default::default()
        },
    }
}

fn describe(
    name: &str,
    id: Uuid,
    partitions: i32,
) -> metadata_response::MetadataResponseTopic<'static> {
    metadata_response::MetadataResponseTopic {
        name: Some(owned(name)),
        topic_id: id,
        partitions: (0..partitions)
            .map(|index| metadata_response::MetadataResponsePartition {
                partition_index: index,
                leader_id: NODE_ID,
                leader_epoch: 0,
                replica_nodes: vec![NODE_ID].into(),
                isr_nodes: vec![NODE_ID].into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Creates topics (num_partitions -1 means the default count).
pub fn create_topics(broker: &Broker, request: &CreateTopicsRequest<'_>) -> ResponseBody<'static> {
    let mut log = broker.log();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = if t.num_partitions == -1 {
                broker.config.default_partitions
            } else {
                t.num_partitions
            };
            let created = if request.validate_only {
                check_topic_name(&t.name).map(|()| Uuid::ZERO)
            } else {
                log.create(&t.name, partitions).map(|topic| topic.id)
            };
            let (error_code, topic_id) = match created {
                Ok(id) => (0, id),
                Err(code) => (code, Uuid::ZERO),
            };
            create_topics_response::CreatableTopicResult {
                name: owned(&t.name),
                topic_id,
                error_code,
                num_partitions: partitions,
                replication_factor: 1,
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::CreateTopics(CreateTopicsResponse {
        topics,
        ..Default::default()
    })
}

/// Deletes topics: by name before v6, by name or id (a null name) from v6.
pub fn delete_topics(
    broker: &Broker,
    request: &DeleteTopicsRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let mut log = broker.log();
    let wanted: Vec<(Option<String>, Uuid)> = if version >= 6 {
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
            let (name, topic_id, error_code) = match log.delete(name.as_deref(), id) {
                Ok((name, id)) => (Some(name), id, 0),
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

/// This one broker, which is also the controller (the admin client's
/// describeCluster asks this, not Metadata, when the broker has it).
pub fn describe_cluster(broker: &Broker, _: &DescribeClusterRequest<'_>) -> ResponseBody<'static> {
    ResponseBody::DescribeCluster(DescribeClusterResponse {
        cluster_id: owned(&broker.config.cluster_id),
        controller_id: NODE_ID,
        brokers: vec![describe_cluster_response::DescribeClusterBroker {
            broker_id: NODE_ID,
            host: broker.host().into(),
            port: broker.port(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    })
}
