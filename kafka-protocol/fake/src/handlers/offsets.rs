//! ListOffsets, OffsetForLeaderEpoch and DeleteRecords: questions about a
//! partition's offsets, answered by its leader.

use kafka_wire::messages::list_offsets_response::ListOffsetsPartitionResponse;
use kafka_wire::messages::{
    delete_records_response, DeleteRecordsRequest, DeleteRecordsResponse, ListOffsetsRequest,
    ListOffsetsResponse, OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::answers::{epoch_end_offset, epoch_topic, list_offsets_partition, list_offsets_topic};
use super::owned;
use crate::dispatch::Context;
use crate::state::log::Found;
use crate::state::topics::Partition;
use crate::state::State;

/// ListOffsets' special timestamps.
const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;
const LATEST_TIERED: i64 = -5;
const EARLIEST_PENDING_UPLOAD: i64 = -6;

/// The partition if this broker leads it at the client's current leader
/// epoch (-1: any), else the error to answer. The epoch is checked first,
/// as Kafka checks it.
fn led<'s>(
    state: &'s State,
    cx: &Context<'_>,
    topic: &str,
    index: i32,
    current_epoch: i32,
) -> Result<&'s Partition, i16> {
    let partition = state
        .topics
        .get(topic)
        .and_then(|t| t.partition(index))
        .ok_or(ErrorCode::UnknownTopicOrPartition.code())?;
    partition.check_epoch(current_epoch)?;
    if partition.leader != cx.node_id {
        return Err(ErrorCode::NotLeaderOrFollower.code());
    }
    Ok(partition)
}

/// Offsets by time: latest, earliest, the max timestamp, or the first
/// batch at or after a timestamp.
pub fn list_offsets(cx: &Context<'_>, request: &ListOffsetsRequest<'_>) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            list_offsets_topic(&t, |p| {
                let mut response = list_offsets_partition(p.partition_index, 0);
                let current = if cx.version >= 4 {
                    p.current_leader_epoch
                } else {
                    -1
                };
                match led(&state, cx, &t.name, p.partition_index, current) {
                    Err(code) => response.error_code = code,
                    Ok(partition) => {
                        if cx.version >= 4 {
                            response.leader_epoch = partition.leader_epoch;
                        }
                        let log = &partition.log;
                        match p.timestamp {
                            LATEST if request.isolation_level == 1 => {
                                response.offset =
                                    partition.txns.last_stable_offset(log.high_watermark());
                            }
                            LATEST | LATEST_TIERED => response.offset = log.high_watermark(),
                            EARLIEST | EARLIEST_LOCAL | EARLIEST_PENDING_UPLOAD => {
                                response.offset = log.log_start_offset()
                            }
                            MAX_TIMESTAMP => found(&mut response, log.max_timestamp()),
                            ts if ts < 0 => {
                                response.error_code = ErrorCode::UnsupportedVersion.code();
                                response.leader_epoch = -1;
                            }
                            ts => found(&mut response, log.offset_for_timestamp(ts)),
                        }
                        if cx.version < 4 {
                            // The version has no leader epoch: it stays at
                            // its default, whatever the record's batch holds.
                            response.leader_epoch = -1;
                        }
                    }
                }
                response
            })
        })
        .collect();
    ResponseBody::ListOffsets(ListOffsetsResponse {
        topics,
        ..Default::default()
    })
}

/// A lookup by time's answer: the record found, with its batch's leader
/// epoch; or, as Kafka answers when no record is found, -1 for the offset,
/// the timestamp and the leader epoch.
fn found(response: &mut ListOffsetsPartitionResponse<'static>, record: Option<Found>) {
    let record = record.unwrap_or(Found {
        timestamp: -1,
        offset: -1,
        leader_epoch: -1,
    });
    response.timestamp = record.timestamp;
    response.offset = record.offset;
    response.leader_epoch = record.leader_epoch;
}

/// The end offset of a leader epoch: where the next epoch began, or the
/// high watermark for the current one (logs are never truncated). The
/// client's current leader epoch is checked first (FENCED_LEADER_EPOCH,
/// UNKNOWN_LEADER_EPOCH).
pub fn offset_for_leader_epoch(
    cx: &Context<'_>,
    request: &OffsetForLeaderEpochRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            epoch_topic(&t, |p| {
                let mut out = epoch_end_offset(p.partition, 0);
                match led(&state, cx, &t.topic, p.partition, p.current_leader_epoch) {
                    Err(code) => out.error_code = code,
                    Ok(partition) => {
                        if p.leader_epoch >= 0 {
                            (out.leader_epoch, out.end_offset) =
                                partition.end_of_epoch(p.leader_epoch);
                        }
                    }
                }
                out
            })
        })
        .collect();
    ResponseBody::OffsetForLeaderEpoch(OffsetForLeaderEpochResponse {
        topics,
        ..Default::default()
    })
}

/// Moves log start offsets forward (-1: to the high watermark).
pub fn delete_records(
    cx: &Context<'_>,
    request: &DeleteRecordsRequest<'_>,
) -> ResponseBody<'static> {
    let mut state = cx.shared.state();
    let mut freed = 0usize;
    let topics = request
        .topics
        .iter()
        .map(|t| delete_records_response::DeleteRecordsTopicResult {
            name: owned(&t.name),
            partitions: t
                .partitions
                .iter()
                .map(|p| {
                    let mut out = delete_records_response::DeleteRecordsPartitionResult {
                        partition_index: p.partition_index,
                        low_watermark: -1,
                        ..Default::default()
                    };
                    let result = led(&state, cx, &t.name, p.partition_index, -1).map(|_| ());
                    let result = result.and_then(|()| {
                        let partition = state
                            .topics
                            .get_mut(&t.name)
                            .and_then(|topic| topic.partition_mut(p.partition_index))
                            .ok_or(ErrorCode::UnknownTopicOrPartition.code())?;
                        let offset = if p.offset == -1 {
                            partition.log.high_watermark()
                        } else {
                            p.offset
                        };
                        freed += partition.log.delete_before(offset)?;
                        Ok(partition.log.log_start_offset())
                    });
                    match result {
                        Ok(low) => out.low_watermark = low,
                        Err(code) => out.error_code = code,
                    }
                    out
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    state.topics.freed(freed);
    ResponseBody::DeleteRecords(DeleteRecordsResponse {
        topics,
        ..Default::default()
    })
}
