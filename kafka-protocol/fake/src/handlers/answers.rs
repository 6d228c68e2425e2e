//! Answers before anything is served: for one partition, every offset,
//! timestamp and epoch unknown (-1) and an error code; for one coordinator
//! key, no node; for a whole API, its default response with every error
//! code set. The handlers start from these and fill in what they find; an
//! injected error answer ([`crate::control`]) sends them as they are, with
//! its code.

use std::borrow::Cow;

use kafka_wire::messages::{
    fetch_response, find_coordinator_response, list_offsets_request, list_offsets_response,
    offset_commit_request, offset_commit_response, offset_fetch_response,
    offset_for_leader_epoch_request, offset_for_leader_epoch_response, produce_response,
    FindCoordinatorResponse,
};
use kafka_wire::runtime::json::Value;
use kafka_wire::{ApiKey, ResponseBody};

use super::error_messages::kafka_message;
use super::owned;

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

/// A ListOffsets topic's answer: each partition of the request's topic
/// answered by `partition`.
pub(crate) fn list_offsets_topic(
    topic: &list_offsets_request::ListOffsetsTopic<'_>,
    mut partition: impl FnMut(
        &list_offsets_request::ListOffsetsPartition<'_>,
    ) -> list_offsets_response::ListOffsetsPartitionResponse<'static>,
) -> list_offsets_response::ListOffsetsTopicResponse<'static> {
    list_offsets_response::ListOffsetsTopicResponse {
        name: owned(&topic.name),
        partitions: topic.partitions.iter().map(|p| partition(&p)).collect(),
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

/// An OffsetForLeaderEpoch topic's answer: each partition of the
/// request's topic answered by `partition`.
pub(crate) fn epoch_topic(
    topic: &offset_for_leader_epoch_request::OffsetForLeaderTopic<'_>,
    mut partition: impl FnMut(
        &offset_for_leader_epoch_request::OffsetForLeaderPartition<'_>,
    ) -> offset_for_leader_epoch_response::EpochEndOffset<'static>,
) -> offset_for_leader_epoch_response::OffsetForLeaderTopicResult<'static> {
    offset_for_leader_epoch_response::OffsetForLeaderTopicResult {
        topic: owned(&topic.topic),
        partitions: topic.partitions.iter().map(|p| partition(&p)).collect(),
        ..Default::default()
    }
}

/// Partition answers in Kafka's order for the requests whose unknown
/// partitions it answers before asking the group or transaction
/// (OffsetCommit, TxnOffsetCommit, AddPartitionsToTxn): those first, then
/// the others, each grouped by topic (`key`) in order of first appearance.
/// Each item is (topic key, answer, unknown).
pub(crate) fn unknown_first<K: PartialEq, P>(items: Vec<(K, P, bool)>) -> Vec<(K, Vec<P>)> {
    let (unknown, known): (Vec<_>, Vec<_>) = items.into_iter().partition(|(_, _, u)| *u);
    let mut grouped: Vec<(K, Vec<P>)> = Vec::new();
    for (key, answer, _) in unknown.into_iter().chain(known) {
        match grouped.iter_mut().find(|(k, _)| *k == key) {
            Some((_, answers)) => answers.push(answer),
            None => grouped.push((key, vec![answer])),
        }
    }
    grouped
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

/// A Fetch partition's answer: no records, every offset unknown.
pub(crate) fn fetch_partition(index: i32, code: i16) -> fetch_response::PartitionData<'static> {
    fetch_response::PartitionData {
        partition_index: index,
        error_code: code,
        high_watermark: -1,
        last_stable_offset: -1,
        log_start_offset: -1,
        preferred_read_replica: -1,
        records: Some(Cow::Borrowed(&[])),
        ..Default::default()
    }
}

/// An OffsetFetch partition's answer (v0-7): no committed offset.
pub(crate) fn offset_fetch_partition(
    index: i32,
    code: i16,
) -> offset_fetch_response::OffsetFetchResponsePartition<'static> {
    offset_fetch_response::OffsetFetchResponsePartition {
        partition_index: index,
        committed_offset: -1,
        committed_leader_epoch: -1,
        error_code: code,
        ..Default::default()
    }
}

/// A FindCoordinator answer (v0-3): no coordinator, with Kafka's message
/// for the code (v1-3 carry one).
pub(crate) fn no_coordinator(code: i16) -> FindCoordinatorResponse<'static> {
    FindCoordinatorResponse {
        error_code: code,
        error_message: kafka_message(code).map(Cow::Borrowed),
        node_id: -1,
        port: -1,
        ..Default::default()
    }
}

/// A FindCoordinator key's answer (v4+): no coordinator for `key`.
pub(crate) fn no_coordinator_for(
    key: &str,
    code: i16,
) -> find_coordinator_response::Coordinator<'static> {
    find_coordinator_response::Coordinator {
        key: owned(key),
        node_id: -1,
        port: -1,
        error_code: code,
        ..Default::default()
    }
}

/// The default response of `api` at `version` with every `errorCode` set
/// to `code`, built through the JSON form so that one function covers
/// every API.
pub(crate) fn every_error_code(api: ApiKey, version: i16, code: i16) -> ResponseBody<'static> {
    let default = ResponseBody::default_for(api);
    let mut json = default.to_json(version);
    set_error_codes(&mut json, code);
    ResponseBody::from_json(&json, api, version).unwrap_or(default)
}

fn set_error_codes(value: &mut Value, code: i16) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "errorCode" {
                    *field = Value::from(code);
                } else {
                    set_error_codes(field, code);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| set_error_codes(v, code)),
        _ => {}
    }
}
