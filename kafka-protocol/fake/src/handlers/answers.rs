//! The answer for one partition before it is served: every offset,
//! timestamp and epoch unknown (-1) and an error code. The handlers start
//! from these and fill in what they find; an injected error answer
//! ([`crate::control`]) sends them as they are, with its code.

use std::borrow::Cow;

use kafka_wire::messages::{
    list_offsets_response, offset_commit_request, offset_commit_response,
    offset_for_leader_epoch_response, produce_response,
};

/// A Produce partition's answer: nothing appended.
pub(crate) fn produce_partition(
    index: i32,
    code: i16,
) -> produce_response::PartitionProduceResponse<'static> {
    produce_response::PartitionProduceResponse {
        index,
        error_code: code,
        base_offset: -1,
        log_append_time_ms: -1,
        log_start_offset: -1,
        ..Default::default()
    }
}

/// A ListOffsets partition's answer: no offset found.
pub(crate) fn list_offsets_partition(
    index: i32,
    code: i16,
) -> list_offsets_response::ListOffsetsPartitionResponse<'static> {
    list_offsets_response::ListOffsetsPartitionResponse {
        partition_index: index,
        error_code: code,
        timestamp: -1,
        offset: -1,
        leader_epoch: -1,
        ..Default::default()
    }
}

/// An OffsetForLeaderEpoch partition's answer: no epoch found.
pub(crate) fn epoch_end_offset(
    partition: i32,
    code: i16,
) -> offset_for_leader_epoch_response::EpochEndOffset<'static> {
    offset_for_leader_epoch_response::EpochEndOffset {
        partition,
        error_code: code,
        leader_epoch: -1,
        end_offset: -1,
        ..Default::default()
    }
}

/// An OffsetCommit topic's answer, named `name`: `code` for each of its
/// partitions.
pub(crate) fn offset_commit_topic(
    topic: &offset_commit_request::OffsetCommitRequestTopic<'_>,
    name: Cow<'static, str>,
    code: i16,
) -> offset_commit_response::OffsetCommitResponseTopic<'static> {
    offset_commit_response::OffsetCommitResponseTopic {
        name,
        topic_id: topic.topic_id,
        partitions: topic
            .partitions
            .iter()
            .map(|p| offset_commit_response::OffsetCommitResponsePartition {
                partition_index: p.partition_index,
                error_code: code,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
