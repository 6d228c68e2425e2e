//! KIP-932's offsets admin of share groups, at the group's coordinator, as
//! Kafka 4.4.0 answers it: DescribeShareGroupOffsets (the start offset,
//! leader epoch and lag of each initialized partition, as the share
//! coordinator last wrote them), AlterShareGroupOffsets and
//! DeleteShareGroupOffsets (an empty share group only: NON_EMPTY_GROUP
//! while it has members; a group of another type is GROUP_ID_NOT_FOUND).

use std::borrow::Cow;

use kafka_wire::messages::{
    alter_share_group_offsets_response, delete_share_group_offsets_response,
    describe_share_group_offsets_response, AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse, DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse, DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::dispatch::Context;
use crate::state::share_groups::{GroupRefusal, Persisted};
use crate::state::State;

/// Kafka's message for a topic or partition it does not have.
const NOT_HOSTED: &str = "This server does not host this topic-partition.";

/// Why the offsets of `group_id` may not be changed here: no group id,
/// not its coordinator, a group of another type, or members.
fn check_alterable(cx: &Context<'_>, state: &State, group_id: &str) -> Result<(), GroupRefusal> {
    if group_id.is_empty() {
        return Err((
            ErrorCode::InvalidGroupId.code(),
            "The group id is invalid.".to_owned(),
        ));
    }
    if cx.shared.coordinator(group_id) != cx.node_id {
        return Err((ErrorCode::NotCoordinator.code(), String::new()));
    }
    if state.groups.get(group_id).is_some() {
        return Err((
            ErrorCode::GroupIdNotFound.code(),
            format!("Group {group_id} is not a share group."),
        ));
    }
    state.share_groups.check_empty(group_id)
}

/// A message, or none for an empty one.
fn message(text: String) -> Option<Cow<'static, str>> {
    (!text.is_empty()).then_some(Cow::Owned(text))
}

/// The first DescribeShareGroupOffsets version with lags.
const LAG: i16 = 1;

/// One partition's described offsets at `version`: its kept state, or
/// none (-1).
fn described_partition(
    version: i16,
    index: i32,
    state: Option<&Persisted>,
    high_watermark: i64,
) -> describe_share_group_offsets_response::DescribeShareGroupOffsetsResponsePartition<'static> {
    describe_share_group_offsets_response::DescribeShareGroupOffsetsResponsePartition {
        partition_index: index,
        start_offset: state.map_or(-1, |s| s.start),
        leader_epoch: 0,
        lag: if version >= LAG {
            state.map_or(-1, |s| s.lag(high_watermark))
        } else {
            -1
        },
        ..Default::default()
    }
}

/// DescribeShareGroupOffsets: each group's partitions (all it has state
/// for, or those asked), with start offsets and lags. A group without
/// state (or none at all) answers -1 for each partition asked.
pub fn describe(
    cx: &Context<'_>,
    request: &DescribeShareGroupOffsetsRequest<'_>,
) -> ResponseBody<'static> {
    use describe_share_group_offsets_response::{
        DescribeShareGroupOffsetsResponseGroup as GroupOut,
        DescribeShareGroupOffsetsResponseTopic as TopicOut,
    };
    let state = cx.shared.state();
    let high_watermark = |topic: Uuid, partition: i32| {
        state
            .topics
            .name_of(topic)
            .and_then(|n| state.topics.get(n))
            .and_then(|t| t.partition(partition))
            .map_or(0, |p| p.log.high_watermark())
    };
    let groups = request
        .groups
        .iter()
        .map(|g| {
            let group_id = g.group_id.to_string();
            let mut out = GroupOut {
                group_id: owned(&group_id),
                ..Default::default()
            };
            if cx.shared.coordinator(&group_id) != cx.node_id {
                out.error_code = ErrorCode::NotCoordinator.code();
                return out;
            }
            let topics: Vec<TopicOut> = match &g.topics {
                None => {
                    let mut topics: Vec<TopicOut> = Vec::new();
                    for ((topic, index), kept) in state.share_groups.persisted_of(&group_id) {
                        let Some(name) = state.topics.name_of(topic) else {
                            continue;
                        };
                        let partition = described_partition(cx.version, index, Some(kept), high_watermark(topic, index));
                        match topics.iter_mut().find(|t| t.topic_id == topic) {
                            Some(t) => t.partitions.push(partition),
                            None => topics.push(TopicOut {
                                topic_name: owned(name),
                                topic_id: topic,
                                partitions: vec![partition].into(),
                                ..Default::default()
                            }),
                        }
                    }
                    topics.sort_by(|a, b| a.topic_name.cmp(&b.topic_name));
                    topics
                }
                Some(asked) => asked
                    .iter()
                    .map(|t| {
                        let found = state.topics.get(&t.topic_name);
                        let id = found.map_or(Uuid::ZERO, |topic| topic.id);
                        let partitions = t
                            .partitions
                            .iter()
                            .map(|index| {
                                let exists = found.is_none_or(|topic| topic.partition(index).is_some());
                                if !exists {
                                    // Kafka 4.4.0 never answers this.
                                    return describe_share_group_offsets_response::DescribeShareGroupOffsetsResponsePartition {
                                        partition_index: index,
                                        start_offset: -1,
                                        lag: -1,
                                        error_code: ErrorCode::UnknownTopicOrPartition.code(),
                                        error_message: Some(Cow::Borrowed(NOT_HOSTED)),
                                        ..Default::default()
                                    };
                                }
                                let kept = state.share_groups.persisted(&group_id, (id, index));
                                described_partition(cx.version, index, kept, high_watermark(id, index))
                            })
                            .collect::<Vec<_>>();
                        TopicOut {
                            topic_name: owned(&t.topic_name),
                            topic_id: id,
                            partitions: partitions.into(),
                            ..Default::default()
                        }
                    })
                    .collect(),
            };
            out.topics = topics.into();
            out
        })
        .collect::<Vec<_>>();
    ResponseBody::DescribeShareGroupOffsets(DescribeShareGroupOffsetsResponse {
        groups: groups.into(),
        ..Default::default()
    })
}

/// AlterShareGroupOffsets: sets the start offset of each partition given
/// (an empty group, created if new). Topics that do not exist come first,
/// every partition refused; partitions that do not exist are refused in
/// place.
pub fn alter(
    cx: &Context<'_>,
    request: &AlterShareGroupOffsetsRequest<'_>,
) -> ResponseBody<'static> {
    use alter_share_group_offsets_response::{
        AlterShareGroupOffsetsResponsePartition as PartitionOut,
        AlterShareGroupOffsetsResponseTopic as TopicOut,
    };
    let group_id = request.group_id.to_string();
    let mut state = cx.shared.state();
    if let Err((code, text)) = check_alterable(cx, &state, &group_id) {
        return ResponseBody::AlterShareGroupOffsets(AlterShareGroupOffsetsResponse {
            error_code: code,
            error_message: message(text),
            ..Default::default()
        });
    }
    let refused = |index: i32| PartitionOut {
        partition_index: index,
        error_code: ErrorCode::UnknownTopicOrPartition.code(),
        error_message: Some(Cow::Borrowed(NOT_HOSTED)),
        ..Default::default()
    };
    let mut unknown = Vec::new();
    let mut known = Vec::new();
    for t in request.topics.iter() {
        let found = state
            .topics
            .get(&t.topic_name)
            .map(|topic| (topic.id, topic.partition_count()));
        let Some((id, count)) = found else {
            unknown.push(TopicOut {
                topic_name: owned(&t.topic_name),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| refused(p.partition_index))
                    .collect::<Vec<_>>()
                    .into(),
                ..Default::default()
            });
            continue;
        };
        let partitions: Vec<PartitionOut> = t
            .partitions
            .iter()
            .map(|p| {
                if p.partition_index < 0 || p.partition_index >= count {
                    return refused(p.partition_index);
                }
                state
                    .share_groups
                    .alter_offset(&group_id, (id, p.partition_index), p.start_offset);
                PartitionOut {
                    partition_index: p.partition_index,
                    ..Default::default()
                }
            })
            .collect();
        known.push(TopicOut {
            topic_name: owned(&t.topic_name),
            topic_id: id,
            partitions: partitions.into(),
            ..Default::default()
        });
    }
    unknown.extend(known);
    ResponseBody::AlterShareGroupOffsets(AlterShareGroupOffsetsResponse {
        responses: unknown.into(),
        ..Default::default()
    })
}

/// DeleteShareGroupOffsets: forgets the state of every partition of each
/// topic given. Topics that do not exist come last, refused.
pub fn delete(
    cx: &Context<'_>,
    request: &DeleteShareGroupOffsetsRequest<'_>,
) -> ResponseBody<'static> {
    use delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic as TopicOut;
    let group_id = request.group_id.to_string();
    let mut state = cx.shared.state();
    if let Err((code, text)) = check_alterable(cx, &state, &group_id) {
        return ResponseBody::DeleteShareGroupOffsets(DeleteShareGroupOffsetsResponse {
            error_code: code,
            error_message: message(text),
            ..Default::default()
        });
    }
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for t in request.topics.iter() {
        match state.topics.get(&t.topic_name).map(|topic| topic.id) {
            Some(id) => {
                state.share_groups.delete_offsets(&group_id, id);
                known.push(TopicOut {
                    topic_name: owned(&t.topic_name),
                    topic_id: id,
                    ..Default::default()
                });
            }
            None => unknown.push(TopicOut {
                topic_name: owned(&t.topic_name),
                error_code: ErrorCode::UnknownTopicOrPartition.code(),
                error_message: Some(Cow::Borrowed(NOT_HOSTED)),
                ..Default::default()
            }),
        }
    }
    known.extend(unknown);
    ResponseBody::DeleteShareGroupOffsets(DeleteShareGroupOffsetsResponse {
        responses: known.into(),
        ..Default::default()
    })
}
