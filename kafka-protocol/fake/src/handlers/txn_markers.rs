//! WriteTxnMarkers: commit or abort markers written to partitions this
//! broker leads. Kafka's transaction coordinators send it to the leaders;
//! clients send it to end a hanging transaction (`Admin#abortTransaction`,
//! `kafka-transactions.sh abort`). The markers end the producer's open
//! transaction on each partition, as the coordinator's would; the
//! coordinator's own record of the transaction is left as it is, as in
//! Kafka.

use std::borrow::Cow;

use kafka_wire::messages::{
    write_txn_markers_response, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::answers::unknown_first;
use super::produce::now_ms;
use super::transactions::write_marker;
use crate::dispatch::Context;
use crate::state::State;

/// Whether a marker of `producer_id` at `epoch` may go to `partition` of
/// `topic` here: 0, or UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
/// or INVALID_PRODUCER_EPOCH for an epoch older than the partition knows.
fn check(
    cx: &Context<'_>,
    state: &State,
    topic: &str,
    partition: i32,
    producer_id: i64,
    epoch: i16,
) -> i16 {
    let Some(p) = state.topics.get(topic).and_then(|t| t.partition(partition)) else {
        return ErrorCode::UnknownTopicOrPartition.code();
    };
    if p.leader != cx.node_id {
        return ErrorCode::NotLeaderOrFollower.code();
    }
    let newer = p
        .producers
        .active()
        .iter()
        .any(|a| a.producer_id == producer_id && a.epoch > epoch);
    if newer {
        return ErrorCode::InvalidProducerEpoch.code();
    }
    0
}

/// Writes each marker's partitions. A marker that names no partition gets
/// no answer; the partitions Kafka does not have are answered first, as
/// Kafka checks them before it appends.
pub fn write_txn_markers(
    cx: &Context<'_>,
    request: &WriteTxnMarkersRequest<'_>,
) -> ResponseBody<'static> {
    let now = now_ms();
    let budget = cx.shared.config.max_bytes;
    let mut state = cx.shared.state();
    let mut markers = Vec::new();
    for marker in request.markers.iter() {
        let (id, epoch) = (marker.producer_id, marker.producer_epoch);
        let mut answers = Vec::new();
        for topic in marker.topics.iter() {
            for partition in topic.partition_indexes.iter() {
                let code = check(cx, &state, &topic.name, partition, id, epoch);
                if code == 0 {
                    write_marker(
                        &mut state,
                        &topic.name,
                        partition,
                        id,
                        epoch,
                        marker.transaction_result,
                        now,
                        budget,
                    );
                }
                let answer = write_txn_markers_response::WritableTxnMarkerPartitionResult {
                    partition_index: partition,
                    error_code: code,
                    ..Default::default()
                };
                let unknown = code == ErrorCode::UnknownTopicOrPartition.code();
                answers.push((topic.name.clone(), answer, unknown));
            }
        }
        if answers.is_empty() {
            continue;
        }
        let topics: Vec<_> = unknown_first(answers)
            .into_iter()
            .map(
                |(name, partitions)| write_txn_markers_response::WritableTxnMarkerTopicResult {
                    name: Cow::Owned(name.into_owned()),
                    partitions: partitions.into(),
                    ..Default::default()
                },
            )
            .collect();
        markers.push(write_txn_markers_response::WritableTxnMarkerResult {
            producer_id: id,
            topics: topics.into(),
            ..Default::default()
        });
    }
    drop(state);
    cx.shared.appended.notify_waiters();
    ResponseBody::WriteTxnMarkers(WriteTxnMarkersResponse {
        markers: markers.into(),
        ..Default::default()
    })
}
