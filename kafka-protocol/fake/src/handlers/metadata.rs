//! What clients read of the cluster: Metadata, DescribeTopicPartitions and
//! DescribeCluster, answered as Kafka 4.4.0's broker answers them.
//!
//! - Metadata: topics by name or (from v12) by id, unknown ids first
//!   (UNKNOWN_TOPIC_ID, no name), then the topics that exist, then those
//!   that do not; each name once. An unknown topic that may be created is
//!   created and answered UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers
//!   while its controller creates it; the next request finds it.
//!   Below v12 a topic id or a null name makes the whole request invalid.
//! - Replicas on a stopped broker are offline and out of the ISR, and
//!   eligible leaders (KIP-966) while the ISR is below
//!   `min.insync.replicas`.
//! - Authorized operations, when asked, are every operation (no
//!   authorizer).

use std::collections::BTreeMap;

use kafka_wire::messages::{
    describe_cluster_response, describe_topic_partitions_response, metadata_response,
    DescribeClusterRequest, DescribeClusterResponse, DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse, MetadataRequest, MetadataResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::authorized;
use super::owned;
use crate::config::MAX_AUTO_CREATED_PER_REQUEST;
use crate::dispatch::Context;
use crate::state::internal_topics::{self, is_internal};
use crate::state::topics::{check_topic_name, Partition, Placement, Topic};
use crate::state::State;

/// The first Metadata version that looks topics up by id.
const TOPIC_IDS: i16 = 12;

/// The first Metadata version with `allow_auto_topic_creation`; below it
/// every request may create topics.
const ALLOW_AUTO_CREATION: i16 = 4;

/// The Metadata versions that carry the cluster's authorized operations.
const CLUSTER_OPERATIONS: std::ops::RangeInclusive<i16> = 8..=10;

/// The first Metadata version that carries topics' authorized operations.
const TOPIC_OPERATIONS: i16 = 8;

/// The largest DescribeTopicPartitions page, whatever the request asks
/// (Kafka's `max.request.partition.size.limit`).
const MAX_PARTITIONS_PER_PAGE: i32 = 2000;

/// A partition as a describe shows it: replicas on a stopped broker are
/// offline and out of the ISR. (replicas, isr, offline.)
fn replica_sets(partition: &Partition, live: &[i32]) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let (isr, offline) = partition.replicas.iter().partition(|r| live.contains(r));
    (partition.replicas.clone(), isr, offline)
}

fn describe(
    name: &str,
    topic: &Topic,
    live: &[i32],
    version: i16,
) -> metadata_response::MetadataResponseTopic<'static> {
    metadata_response::MetadataResponseTopic {
        name: Some(owned(name)),
        topic_id: topic.id,
        is_internal: is_internal(name),
        partitions: topic
            .partitions
            .iter()
            .zip(0..)
            .map(|(p, index)| {
                let (mut replicas, mut isr, offline) = replica_sets(p, live);
                let mut error_code = 0;
                if version == 0 && !offline.is_empty() {
                    // v0 lists the live replicas only, and says some are
                    // missing.
                    replicas.retain(|r| live.contains(r));
                    isr.retain(|r| live.contains(r));
                    error_code = ErrorCode::ReplicaNotAvailable.code();
                }
                metadata_response::MetadataResponsePartition {
                    error_code,
                    partition_index: index,
                    leader_id: p.leader,
                    leader_epoch: p.leader_epoch,
                    replica_nodes: replicas.into(),
                    isr_nodes: isr.into(),
                    offline_replicas: offline.into(),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    }
}

/// A topic that is not there: its error, its name, whether the name is an
/// internal topic's.
fn absent(code: i16, name: &str) -> metadata_response::MetadataResponseTopic<'static> {
    metadata_response::MetadataResponseTopic {
        error_code: code,
        name: Some(owned(name)),
        is_internal: is_internal(name),
        ..Default::default()
    }
}

/// Kafka's answer to a request it refuses whole (INVALID_REQUEST): every
/// topic asked for with the error, no broker, no cluster id, no
/// controller.
fn refused(request: &MetadataRequest<'_>) -> ResponseBody<'static> {
    let topics = request
        .topics
        .iter()
        .flat_map(|topics| topics.iter())
        .map(|t| metadata_response::MetadataResponseTopic {
            error_code: ErrorCode::InvalidRequest.code(),
            name: Some(owned(t.name.as_deref().unwrap_or_default())),
            topic_id: t.topic_id,
            ..Default::default()
        })
        .collect();
    ResponseBody::Metadata(MetadataResponse {
        brokers: Vec::new().into(),
        cluster_id: None,
        controller_id: -1,
        topics,
        ..Default::default()
    })
}

/// Describes the requested topics (all when null, or an empty list at
/// v0), creating unknown ones when the cluster and the request allow it,
/// up to [`MAX_AUTO_CREATED_PER_REQUEST`] per request.
pub fn metadata(cx: &Context<'_>, request: &MetadataRequest<'_>) -> ResponseBody<'static> {
    let version = cx.version;
    let asked = request
        .topics
        .as_ref()
        .filter(|topics| !(version == 0 && topics.is_empty()));
    if let Some(topics) = asked {
        let invalid = topics
            .iter()
            .any(|t| t.name.is_none() || t.topic_id != Uuid::ZERO);
        if version < TOPIC_IDS && invalid {
            return refused(request);
        }
    }
    let shared = cx.shared;
    let live = shared.node_ids();
    let mut state = shared.state();
    let may_create = shared.config.auto_create
        && (version < ALLOW_AUTO_CREATION || request.allow_auto_topic_creation);

    // Topic ids, when any is given, win over names, as in Kafka.
    let mut ids: Vec<Uuid> = Vec::new();
    for t in asked.iter().flat_map(|topics| topics.iter()) {
        if t.topic_id != Uuid::ZERO && !ids.contains(&t.topic_id) {
            ids.push(t.topic_id);
        }
    }
    let mut topics = Vec::new();
    let names: Vec<String> = match asked {
        None => state.topics.names(),
        Some(_) if !ids.is_empty() => ids
            .iter()
            .filter_map(|&id| match state.topics.name_of(id) {
                Some(name) => Some(name.to_owned()),
                None => {
                    topics.push(metadata_response::MetadataResponseTopic {
                        error_code: ErrorCode::UnknownTopicId.code(),
                        name: None,
                        topic_id: id,
                        ..Default::default()
                    });
                    None
                }
            })
            .collect(),
        Some(asked) => {
            let mut names: Vec<String> = Vec::new();
            for t in asked.iter() {
                if let Some(name) = t.name.as_deref() {
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_owned());
                    }
                }
            }
            names
        }
    };
    let unknown_ids = topics.len();
    let mut missing = Vec::new();
    for name in &names {
        match state.topics.get(name) {
            Some(topic) => topics.push(describe(name, topic, &live, version)),
            None => missing.push(name.as_str()),
        }
    }
    let mut left = MAX_AUTO_CREATED_PER_REQUEST;
    for name in missing {
        let code = match check_topic_name(name) {
            Err(code) => code,
            Ok(()) => {
                if may_create && asked.is_some() && left > 0 {
                    left -= 1;
                    create(cx, &mut state, name, &live);
                }
                ErrorCode::UnknownTopicOrPartition.code()
            }
        };
        topics.push(absent(code, name));
    }
    if version >= TOPIC_OPERATIONS && request.include_topic_authorized_operations {
        for topic in topics.iter_mut().skip(unknown_ids) {
            topic.topic_authorized_operations = authorized::TOPIC;
        }
    }
    drop(state);
    ResponseBody::Metadata(MetadataResponse {
        brokers: shared
            .brokers()
            .iter()
            .map(|b| metadata_response::MetadataResponseBroker {
                node_id: b.node_id,
                host: owned(&b.host),
                port: i32::from(b.port),
                rack: b.rack.as_deref().map(owned),
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(owned(&shared.config.cluster_id)),
        controller_id: shared.controller(),
        topics: topics.into(),
        cluster_authorized_operations: authorized::when(
            CLUSTER_OPERATIONS.contains(&version) && request.include_cluster_authorized_operations,
            authorized::CLUSTER,
        ),
        ..Default::default()
    })
}

/// Creates `name` as Metadata's auto-creation does: an internal topic
/// with its own settings, any other with the cluster's defaults.
fn create(cx: &Context<'_>, state: &mut State, name: &str, live: &[i32]) {
    if internal_topics::ensure(&mut state.topics, name, live) {
        return;
    }
    let placement = Placement {
        nodes: live,
        replication_factor: cx.shared.default_replication(),
        assigned: &[],
    };
    let _ = state.topics.create(
        name,
        cx.shared.config.default_partitions,
        BTreeMap::new(),
        placement,
    );
}

/// Partitions of the requested topics (all when none), in name order,
/// paged by a cursor and a limit. A cursor naming a topic not asked for,
/// or a negative partition, is an invalid request for every topic.
pub fn describe_topic_partitions(
    cx: &Context<'_>,
    request: &DescribeTopicPartitionsRequest<'_>,
) -> ResponseBody<'static> {
    use describe_topic_partitions_response::{
        Cursor, DescribeTopicPartitionsResponsePartition as PartitionOut,
        DescribeTopicPartitionsResponseTopic as TopicOut,
    };
    let live = cx.shared.node_ids();
    let state = cx.shared.state();
    let mut names: Vec<String> = if request.topics.is_empty() {
        state.topics.names()
    } else {
        let mut names: Vec<String> = request.topics.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        names.dedup();
        names
    };
    let error_topic = |name: &str, code: ErrorCode| TopicOut {
        error_code: code.code(),
        name: Some(owned(name)),
        is_internal: is_internal(name),
        topic_authorized_operations: authorized::TOPIC,
        ..Default::default()
    };
    let (cursor_topic, cursor_partition) = request.cursor.as_ref().map_or((None, 0), |c| {
        (Some(c.topic_name.to_string()), c.partition_index)
    });
    if let Some(cursor_topic) = &cursor_topic {
        if cursor_partition < 0 || !names.contains(cursor_topic) {
            let topics: Vec<TopicOut> = names
                .iter()
                .map(|name| error_topic(name, ErrorCode::InvalidRequest))
                .collect();
            return ResponseBody::DescribeTopicPartitions(DescribeTopicPartitionsResponse {
                topics: topics.into(),
                ..Default::default()
            });
        }
        names.retain(|n| n >= cursor_topic);
    }
    let mut limit = request
        .response_partition_limit
        .clamp(1, MAX_PARTITIONS_PER_PAGE);
    let mut topics = Vec::new();
    let mut next_cursor = None;
    for name in names {
        if check_topic_name(&name).is_err() {
            topics.push(error_topic(&name, ErrorCode::InvalidTopicException));
            continue;
        }
        let Some(topic) = state.topics.get(&name) else {
            topics.push(error_topic(&name, ErrorCode::UnknownTopicOrPartition));
            continue;
        };
        if limit == 0 {
            next_cursor = Some(Cursor {
                topic_name: owned(&name),
                partition_index: 0,
                ..Default::default()
            });
            break;
        }
        let start = match &cursor_topic {
            Some(cursor) if *cursor == name => cursor_partition,
            _ => 0,
        };
        let mut partitions = Vec::new();
        for (p, index) in topic
            .partitions
            .iter()
            .zip(0..)
            .skip(usize::try_from(start).unwrap_or(0))
        {
            if limit == 0 {
                next_cursor = Some(Cursor {
                    topic_name: owned(&name),
                    partition_index: index,
                    ..Default::default()
                });
                break;
            }
            limit -= 1;
            let (replicas, isr, offline) = replica_sets(p, &live);
            // KIP-966: while the ISR is below min.insync.replicas, the
            // replicas that left it cleanly may still be elected.
            let min_isr = topic
                .config("min.insync.replicas")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(1)
                .min(replicas.len());
            let eligible = if isr.len() < min_isr {
                offline.clone()
            } else {
                Vec::new()
            };
            partitions.push(PartitionOut {
                partition_index: index,
                leader_id: p.leader,
                leader_epoch: p.leader_epoch,
                replica_nodes: replicas.into(),
                isr_nodes: isr.into(),
                offline_replicas: offline.into(),
                eligible_leader_replicas: Some(eligible.into()),
                last_known_elr: Some(Vec::new().into()),
                ..Default::default()
            });
        }
        topics.push(TopicOut {
            name: Some(owned(&name)),
            topic_id: topic.id,
            is_internal: is_internal(&name),
            partitions: partitions.into(),
            topic_authorized_operations: authorized::TOPIC,
            ..Default::default()
        });
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

/// Every running broker (and, when asked, the stopped ones, fenced), and
/// the controller (the first running broker).
pub fn describe_cluster(
    cx: &Context<'_>,
    request: &DescribeClusterRequest<'_>,
) -> ResponseBody<'static> {
    let shared = cx.shared;
    let brokers = shared
        .control
        .members()
        .into_iter()
        .filter(|m| m.up || request.include_fenced_brokers)
        .map(|m| describe_cluster_response::DescribeClusterBroker {
            broker_id: m.address.node_id,
            host: owned(&m.address.host),
            port: i32::from(m.address.port),
            rack: m.address.rack.as_deref().map(owned),
            is_fenced: !m.up,
            ..Default::default()
        })
        .collect();
    ResponseBody::DescribeCluster(DescribeClusterResponse {
        cluster_id: owned(&shared.config.cluster_id),
        controller_id: shared.controller(),
        endpoint_type: request.endpoint_type,
        brokers,
        cluster_authorized_operations: authorized::when(
            request.include_cluster_authorized_operations,
            authorized::CLUSTER,
        ),
        ..Default::default()
    })
}
