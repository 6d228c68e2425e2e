//! Error answers built from the request: the response of the request's API
//! with an error code in its top-level and per-partition or per-resource
//! error codes, mirroring the topics, partitions and keys asked about.
//!
//! Produce, Fetch, ListOffsets, Metadata, OffsetCommit, OffsetFetch,
//! FindCoordinator and OffsetForLeaderEpoch mirror the request; every
//! other API gets its default response with every `errorCode` set (through
//! the JSON form), which covers the APIs whose only error is top-level
//! (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, InitProducerId, ...).

use kafka_wire::IntoOwned;

use kafka_wire::messages::{
    fetch_response, metadata_response, offset_fetch_response, produce_response, FetchResponse,
    FindCoordinatorResponse, ListOffsetsResponse, MetadataResponse, OffsetCommitResponse,
    OffsetFetchResponse, OffsetForLeaderEpochResponse, ProduceResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{RequestBody, ResponseBody};

use crate::handlers::answers::{
    epoch_end_offset, epoch_topic, every_error_code, fetch_partition, list_offsets_partition,
    list_offsets_topic, no_coordinator, no_coordinator_for, offset_commit_topic,
    offset_fetch_partition, produce_partition,
};
use crate::handlers::owned;
use crate::state::Shared;

/// The response to `body` (at `version`) with `code` everywhere (in the
/// fields `version` has).
pub fn error_response(body: &RequestBody<'_>, version: i16, code: i16) -> ResponseBody<'static> {
    let built = mirror(body, version, code);
    // Through the JSON form at `version`: fields the version lacks go back
    // to their defaults, as the encoder requires.
    let api = body.api_key();
    ResponseBody::from_json(&built.to_json(version), api, version)
        .unwrap_or_else(|_| every_error_code(api, version, code))
}

fn mirror(body: &RequestBody<'_>, version: i16, code: i16) -> ResponseBody<'static> {
    match body {
        RequestBody::Produce(r) => ResponseBody::Produce(ProduceResponse {
            responses: r
                .topic_data
                .iter()
                .map(|t| produce_response::TopicProduceResponse {
                    name: owned(&t.name),
                    topic_id: t.topic_id,
                    partition_responses: t
                        .partition_data
                        .iter()
                        .map(|p| produce_partition(p.index, code))
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::Fetch(r) => ResponseBody::Fetch(FetchResponse {
            error_code: code,
            session_id: 0,
            responses: r
                .topics
                .iter()
                .map(|t| fetch_response::FetchableTopicResponse {
                    topic: owned(&t.topic),
                    topic_id: t.topic_id,
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| fetch_partition(p.partition, code))
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::ListOffsets(r) => ResponseBody::ListOffsets(ListOffsetsResponse {
            topics: r
                .topics
                .iter()
                .map(|t| {
                    list_offsets_topic(&t, |p| list_offsets_partition(p.partition_index, code))
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::Metadata(r) => ResponseBody::Metadata(MetadataResponse {
            error_code: code,
            controller_id: -1,
            topics: r
                .topics
                .iter()
                .flat_map(|topics| topics.iter())
                .map(|t| metadata_response::MetadataResponseTopic {
                    error_code: code,
                    name: t.name.as_deref().map(owned),
                    topic_id: t.topic_id,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        RequestBody::OffsetCommit(r) => ResponseBody::OffsetCommit(OffsetCommitResponse {
            topics: r
                .topics
                .iter()
                .map(|t| offset_commit_topic(&t, owned(&t.name), code))
                .collect(),
            ..Default::default()
        }),
        RequestBody::OffsetFetch(r) => {
            let partition = |index: i32| offset_fetch_partition(index, code);
            ResponseBody::OffsetFetch(OffsetFetchResponse {
                error_code: code,
                topics: r
                    .topics
                    .iter()
                    .flat_map(|topics| topics.iter())
                    .map(|t| offset_fetch_response::OffsetFetchResponseTopic {
                        name: owned(&t.name),
                        partitions: t.partition_indexes.iter().map(partition).collect(),
                        ..Default::default()
                    })
                    .collect(),
                groups: r
                    .groups
                    .iter()
                    .map(|g| offset_fetch_response::OffsetFetchResponseGroup {
                        group_id: owned(&g.group_id),
                        error_code: code,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
        }
        RequestBody::FindCoordinator(r) => ResponseBody::FindCoordinator(FindCoordinatorResponse {
            coordinators: r
                .coordinator_keys
                .iter()
                .map(|key| no_coordinator_for(key, code))
                .collect(),
            ..no_coordinator(code)
        }),
        RequestBody::OffsetForLeaderEpoch(r) => {
            ResponseBody::OffsetForLeaderEpoch(OffsetForLeaderEpochResponse {
                topics: r
                    .topics
                    .iter()
                    .map(|t| epoch_topic(&t, |p| epoch_end_offset(p.partition, code)))
                    .collect(),
                ..Default::default()
            })
        }
        other => every_error_code(other.api_key(), version, code),
    }
}

/// Whether (topic, partition) is one of `chosen`; a topic id is matched
/// through its current name.
fn chosen(shared: &Shared, list: &[(String, i32)], name: &str, id: Uuid, index: i32) -> bool {
    if !name.is_empty() {
        return list.iter().any(|(t, p)| t == name && *p == index);
    }
    let state = shared.state();
    let Some(name) = state.topics.name_of(id) else {
        return false;
    };
    list.iter().any(|(t, p)| t == name && *p == index)
}

/// For a Produce with chosen partitions: the request without them, to
/// handle; `None` for other APIs.
pub(crate) fn without_chosen(
    shared: &Shared,
    body: &RequestBody<'_>,
    list: &[(String, i32)],
) -> Option<RequestBody<'static>> {
    let RequestBody::Produce(r) = body else {
        return None;
    };
    let mut owned_request = r.clone().into_owned();
    for t in owned_request.topic_data.to_mut() {
        let (name, id) = (t.name.to_string(), t.topic_id);
        t.partition_data
            .to_mut()
            .retain(|p| !chosen(shared, list, &name, id, p.index));
    }
    Some(RequestBody::Produce(owned_request))
}

/// Whether partition errors of `api` are answered per partition (else the
/// whole request gets the error).
pub(crate) fn per_partition(api: kafka_wire::ApiKey) -> bool {
    use kafka_wire::ApiKey;
    matches!(api, ApiKey::Produce | ApiKey::Fetch | ApiKey::ListOffsets)
}

/// Puts `code` in the answer for every chosen partition of the request:
/// Produce's were left out of the handled request and are added back;
/// Fetch's and ListOffsets' answers are replaced.
pub(crate) fn patch_chosen(
    shared: &Shared,
    request: &RequestBody<'_>,
    response: &mut ResponseBody<'static>,
    code: i16,
    list: &[(String, i32)],
) {
    match (request, response) {
        (RequestBody::Produce(r), ResponseBody::Produce(out)) => {
            for t in r.topic_data.iter() {
                let missing: Vec<_> = t
                    .partition_data
                    .iter()
                    .filter(|p| chosen(shared, list, &t.name, t.topic_id, p.index))
                    .map(|p| produce_partition(p.index, code))
                    .collect();
                if missing.is_empty() {
                    continue;
                }
                let topics = out.responses.to_mut();
                let at = topics
                    .iter()
                    .position(|o| o.name == t.name && o.topic_id == t.topic_id);
                match at.and_then(|i| topics.get_mut(i)) {
                    Some(o) => o.partition_responses.to_mut().extend(missing),
                    None => topics.push(produce_response::TopicProduceResponse {
                        name: owned(&t.name),
                        topic_id: t.topic_id,
                        partition_responses: missing.into(),
                        ..Default::default()
                    }),
                }
            }
        }
        (RequestBody::Fetch(_), ResponseBody::Fetch(out)) => {
            for t in out.responses.to_mut() {
                let (name, id) = (t.topic.to_string(), t.topic_id);
                for p in t.partitions.to_mut() {
                    if chosen(shared, list, &name, id, p.partition_index) {
                        *p = fetch_partition(p.partition_index, code);
                    }
                }
            }
        }
        (RequestBody::ListOffsets(_), ResponseBody::ListOffsets(out)) => {
            for t in out.topics.to_mut() {
                let name = t.name.to_string();
                for p in t.partitions.to_mut() {
                    if chosen(shared, list, &name, Uuid::ZERO, p.partition_index) {
                        *p = list_offsets_partition(p.partition_index, code);
                    }
                }
            }
        }
        // Other APIs are answered with the error before being handled.
        _ => {}
    }
}
