//! DescribeQuorum: the metadata quorum as Kafka 4.4.0 describes that of a
//! cluster whose first node is a combined broker and controller (as
//! `tests/kafka/broker.sh` starts one): the controller (the first running
//! broker) is the only voter and the leader, the other brokers observe.
//! The fake keeps no metadata log: its offsets stay at
//! [`METADATA_LOG_END`], and every replica has fetched just now.

use std::borrow::Cow;

use kafka_wire::messages::{
    describe_quorum_response, DescribeQuorumRequest, DescribeQuorumResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::error_messages::kafka_message;
use super::produce::now_ms;
use crate::dispatch::Context;

/// The topic and partition of Kafka's metadata log.
const METADATA_TOPIC: &str = "__cluster_metadata";
const METADATA_PARTITION: i32 = 0;

/// The leader's epoch: the quorum's first election.
const LEADER_EPOCH: i32 = 1;

/// The end (and high watermark) of the metadata log the fake does not keep.
pub const METADATA_LOG_END: i64 = 1;

/// The name of Kafka's controller listener.
const CONTROLLER_LISTENER: &str = "CONTROLLER";

/// Node `node_id`'s metadata log directory id: drawn at random by a Kafka
/// node when it formats its storage; here fixed by the cluster id and the
/// node, never zero.
fn directory_id(cluster_id: &str, node_id: i32) -> Uuid {
    let mut bytes = [0u8; 16];
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (half, salt) in [(0usize, 0x5bu8), (8, 0xa7)] {
        for byte in cluster_id
            .bytes()
            .chain(node_id.to_be_bytes())
            .chain([salt])
        {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        bytes[half..half + 8].copy_from_slice(&hash.to_be_bytes());
    }
    bytes[0] |= 1;
    Uuid(bytes)
}

/// DescribeQuorum, as the leader of the metadata quorum answers it (a
/// broker forwards it there). Only a request for the one partition of
/// `__cluster_metadata` is answered; any other shape gets
/// UNKNOWN_TOPIC_OR_PARTITION for every partition it names, as Kafka's raft
/// client answers it.
pub fn describe_quorum(
    cx: &Context<'_>,
    request: &DescribeQuorumRequest<'_>,
) -> ResponseBody<'static> {
    let asks_for_the_log = request.topics.len() == 1
        && request.topics.iter().all(|t| {
            t.topic_name == METADATA_TOPIC
                && t.partitions.len() == 1
                && t.partitions
                    .iter()
                    .all(|p| p.partition_index == METADATA_PARTITION)
        });
    if !asks_for_the_log {
        let unknown = ErrorCode::UnknownTopicOrPartition.code();
        let topics = request
            .topics
            .iter()
            .map(|t| describe_quorum_response::TopicData {
                topic_name: Cow::Owned(t.topic_name.to_string()),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| describe_quorum_response::PartitionData {
                        partition_index: p.partition_index,
                        error_code: unknown,
                        error_message: kafka_message(unknown).map(Cow::Borrowed),
                        ..Default::default()
                    })
                    .collect::<Vec<_>>()
                    .into(),
                ..Default::default()
            })
            .collect::<Vec<_>>();
        return ResponseBody::DescribeQuorum(DescribeQuorumResponse {
            topics: topics.into(),
            ..Default::default()
        });
    }
    let cluster_id = &cx.shared.config.cluster_id;
    let now = now_ms();
    // Fetch times from v1, directory ids from v2.
    let version = cx.version;
    let replica = |node_id: i32| {
        let mut replica = describe_quorum_response::ReplicaState {
            replica_id: node_id,
            log_end_offset: METADATA_LOG_END,
            ..Default::default()
        };
        if version >= 1 {
            replica.last_fetch_timestamp = now;
            replica.last_caught_up_timestamp = now;
        }
        if version >= 2 {
            replica.replica_directory_id = directory_id(cluster_id, node_id);
        }
        replica
    };
    let brokers = cx.shared.brokers();
    let leader = cx.shared.controller();
    let observers: Vec<_> = brokers
        .iter()
        .filter(|b| b.node_id != leader)
        .map(|b| replica(b.node_id))
        .collect();
    // The voters' listeners are described from v2.
    let nodes: Vec<_> = brokers
        .iter()
        .filter(|b| b.node_id == leader && version >= 2)
        .map(|b| describe_quorum_response::Node {
            node_id: b.node_id,
            listeners: vec![describe_quorum_response::Listener {
                name: Cow::Borrowed(CONTROLLER_LISTENER),
                host: Cow::Owned(b.host.clone()),
                port: b.port,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        })
        .collect();
    let partition = describe_quorum_response::PartitionData {
        partition_index: METADATA_PARTITION,
        leader_id: leader,
        leader_epoch: LEADER_EPOCH,
        high_watermark: METADATA_LOG_END,
        current_voters: vec![replica(leader)].into(),
        observers: observers.into(),
        ..Default::default()
    };
    ResponseBody::DescribeQuorum(DescribeQuorumResponse {
        topics: vec![describe_quorum_response::TopicData {
            topic_name: Cow::Borrowed(METADATA_TOPIC),
            partitions: vec![partition].into(),
            ..Default::default()
        }]
        .into(),
        nodes: nodes.into(),
        ..Default::default()
    })
}
