//! OffsetCommit, OffsetFetch (one group, or many from v8) and
//! OffsetDelete: committed offsets, kept by the group's coordinator.

use std::borrow::Cow;

use kafka_wire::messages::{
    offset_commit_request, offset_commit_response, offset_delete_response, offset_fetch_response,
    OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse,
    OffsetFetchRequest, OffsetFetchResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::answers::{offset_commit_topic, unknown_first};
use super::groups::{check_coordinator, check_group};
use super::owned;
use crate::dispatch::Context;
use crate::state::committed::Committed;
use crate::state::State;

/// Stores offsets when the member and generation check out (topics by
/// name before v10, by id from v10). The topic name is copied once per
/// topic, not per partition. A partition of an unknown topic id, topic or
/// partition is answered first, as Kafka answers it before the group is
/// asked (UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION); the group is asked
/// only when some partition is known, or none is named. A commit with a
/// generation to a group that does not exist is ILLEGAL_GENERATION (from
/// v9, whose consumers are KIP-848 members, GROUP_ID_NOT_FOUND).
pub fn offset_commit(cx: &Context<'_>, request: &OffsetCommitRequest<'_>) -> ResponseBody<'static> {
    let by_id = cx.version >= 10;
    let mut state = cx.shared.state();
    let names: Vec<Option<String>> = request
        .topics
        .iter()
        .map(|t| {
            if by_id {
                state.topics.name_of(t.topic_id).map(str::to_owned)
            } else {
                Some(t.name.to_string())
            }
        })
        .collect();
    let fits = |p: &offset_commit_request::OffsetCommitRequestPartition<'_>| {
        metadata_fits(p.committed_metadata.as_deref())
    };
    let known = |state: &State, name: &Option<String>, partition: i32| {
        name.as_deref().is_some_and(|name| {
            state
                .topics
                .get(name)
                .is_some_and(|topic| topic.partition(partition).is_some())
        })
    };
    let offsets: Vec<(String, Vec<(i32, Committed)>)> = request
        .topics
        .iter()
        .zip(&names)
        .filter_map(|(t, name)| {
            let partitions: Vec<(i32, Committed)> = t
                .partitions
                .iter()
                .filter(|p| known(&state, name, p.partition_index) && fits(p))
                .map(|p| {
                    let committed: Committed = (
                        p.committed_offset,
                        p.committed_leader_epoch,
                        Some(stored_metadata(p.committed_metadata.as_deref())),
                    );
                    (p.partition_index, committed)
                })
                .collect();
            (!partitions.is_empty()).then(|| name.clone().map(|n| (n, partitions)))?
        })
        .collect();
    if check_coordinator(cx, &request.group_id).is_ok() {
        if let Some(topics) = streams_commit(&mut state, cx.version, request, &names, &offsets) {
            return ResponseBody::OffsetCommit(OffsetCommitResponse {
                topics: topics.into(),
                ..Default::default()
            });
        }
    }
    let any_known = request.topics.iter().zip(&names).any(|(t, name)| {
        t.partitions
            .iter()
            .any(|p| known(&state, name, p.partition_index))
    });
    let ask_group = request.topics.is_empty() || any_known;
    // Only a simple commit (no generation) makes a group, as in Kafka.
    let no_group =
        request.generation_id_or_member_epoch >= 0 && state.groups.get(&request.group_id).is_none();
    let group_code = match check_coordinator(cx, &request.group_id) {
        Err(code) => code,
        Ok(()) if ask_group && no_group && cx.version >= 9 => ErrorCode::GroupIdNotFound.code(),
        Ok(()) if ask_group && no_group => ErrorCode::IllegalGeneration.code(),
        Ok(()) if ask_group => state.groups.commit(
            &request.group_id,
            &request.member_id,
            request.group_instance_id.as_deref(),
            request.generation_id_or_member_epoch,
            offsets,
        ),
        Ok(()) => 0,
    };
    // Keyed by the request's name, borrowed: each is copied once, per topic.
    let mut answers = Vec::new();
    for (t, name) in request.topics.iter().zip(&names) {
        let key = (
            if by_id {
                Cow::Borrowed("")
            } else {
                t.name.clone()
            },
            t.topic_id,
        );
        for p in t.partitions.iter() {
            let unknown = !known(&state, name, p.partition_index);
            let error_code = match name {
                None => ErrorCode::UnknownTopicId.code(),
                Some(_) if unknown => ErrorCode::UnknownTopicOrPartition.code(),
                Some(_) if group_code == 0 && !fits(&p) => ErrorCode::OffsetMetadataTooLarge.code(),
                Some(_) => group_code,
            };
            let answer = offset_commit_response::OffsetCommitResponsePartition {
                partition_index: p.partition_index,
                error_code,
                ..Default::default()
            };
            answers.push((key.clone(), answer, unknown));
        }
    }
    let topics = unknown_first(answers)
        .into_iter()
        .map(
            |((name, topic_id), partitions)| offset_commit_response::OffsetCommitResponseTopic {
                name: owned(&name),
                topic_id,
                partitions: partitions.into(),
                ..Default::default()
            },
        )
        .collect();
    ResponseBody::OffsetCommit(OffsetCommitResponse {
        topics,
        ..Default::default()
    })
}

/// Kafka's `offset.metadata.max.bytes`: longer committed metadata is
/// OFFSET_METADATA_TOO_LARGE (its length counted as Java counts it).
pub const OFFSET_METADATA_MAX: usize = 4096;

/// Whether committed `metadata` is short enough to keep.
pub(crate) fn metadata_fits(metadata: Option<&str>) -> bool {
    metadata.is_none_or(|m| m.encode_utf16().count() <= OFFSET_METADATA_MAX)
}

/// The metadata kept for a commit: null is kept as "", as Kafka keeps it.
pub(crate) fn stored_metadata(metadata: Option<&str>) -> String {
    metadata.unwrap_or_default().to_owned()
}

/// An OffsetCommit to a streams group: each partition checked against the
/// member's tasks and their epochs, and stored when it passes. None when
/// the group is not a streams group.
fn streams_commit(
    state: &mut State,
    version: i16,
    request: &OffsetCommitRequest<'_>,
    names: &[Option<String>],
    offsets: &[(String, Vec<(i32, Committed)>)],
) -> Option<Vec<offset_commit_response::OffsetCommitResponseTopic<'static>>> {
    if !state.groups.is_streams(&request.group_id) {
        return None;
    }
    let partitions: Vec<(&str, i32)> = offsets
        .iter()
        .flat_map(|(topic, ps)| ps.iter().map(move |(p, _)| (topic.as_str(), *p)))
        .collect();
    let codes = state.groups.streams_commit_codes(
        &request.group_id,
        &request.member_id,
        request.generation_id_or_member_epoch,
        false,
        version,
        &partitions,
    )?;
    let mut passed = codes.iter();
    for (topic, ps) in offsets {
        for (partition, committed) in ps {
            if passed.next() == Some(&0) {
                state
                    .groups
                    .store(&request.group_id, topic, *partition, committed.clone());
            }
        }
    }
    let mut codes = codes.into_iter();
    let topics = request
        .topics
        .iter()
        .zip(names)
        .map(|(t, name)| {
            let shown = if version >= 10 {
                Cow::Borrowed("")
            } else {
                owned(&t.name)
            };
            let mut answer = offset_commit_topic(&t, shown, 0);
            let given: Vec<_> = t.partitions.iter().collect();
            for (partition, asked) in answer.partitions.to_mut().iter_mut().zip(&given) {
                // As `offset_commit` filtered `offsets`: unknown partitions
                // and metadata too large never reached the group.
                let known = name.as_deref().is_some_and(|n| {
                    state
                        .topics
                        .get(n)
                        .is_some_and(|topic| topic.partition(partition.partition_index).is_some())
                });
                partition.error_code = match name {
                    None => ErrorCode::UnknownTopicId.code(),
                    Some(_) if !known => ErrorCode::UnknownTopicOrPartition.code(),
                    Some(_) if !metadata_fits(asked.committed_metadata.as_deref()) => {
                        ErrorCode::OffsetMetadataTooLarge.code()
                    }
                    Some(_) => codes.next().unwrap_or(0),
                };
            }
            answer
        })
        .collect();
    Some(topics)
}

/// (topic, id, [(partition, committed)]) for the wanted partitions, or all
/// committed ones when `wanted` is None.
type Found = Vec<(String, Uuid, Vec<(i32, Committed)>)>;

fn committed(state: &State, group_id: &str, wanted: Option<Vec<(String, Vec<i32>)>>) -> Found {
    let offsets = state.groups.offsets(group_id);
    let none: Committed = (-1, -1, Some(String::new()));
    let id_of = |name: &str| state.topics.get(name).map_or(Uuid::ZERO, |t| t.id);
    match wanted {
        Some(wanted) => wanted
            .into_iter()
            .map(|(topic, partitions)| {
                let found = partitions
                    .into_iter()
                    .map(|p| {
                        let c = offsets
                            .and_then(|o| o.get(&topic))
                            .and_then(|ps| ps.get(&p))
                            .cloned()
                            .unwrap_or_else(|| none.clone());
                        (p, c)
                    })
                    .collect();
                let id = id_of(&topic);
                (topic, id, found)
            })
            .collect(),
        None => {
            let mut all: Found = offsets
                .map(|o| {
                    o.iter()
                        .map(|(topic, ps)| {
                            let mut ps: Vec<(i32, Committed)> =
                                ps.iter().map(|(p, c)| (*p, c.clone())).collect();
                            ps.sort_by_key(|(p, _)| *p);
                            (topic.clone(), id_of(topic), ps)
                        })
                        .collect()
                })
                .unwrap_or_default();
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all
        }
    }
}

/// UNSTABLE_OFFSET_COMMIT when the request asks for stable offsets
/// (v7+) and an ongoing transaction holds one for the partition.
fn unstable(state: &State, require_stable: bool, group: &str, topic: &str, partition: i32) -> i16 {
    if require_stable && state.transactions.offset_pending(group, topic, partition) {
        ErrorCode::UnstableOffsetCommit.code()
    } else {
        0
    }
}

/// Committed offsets (-1 where none) of one group (v1-7) or of several
/// (v8+); a null topic list means every committed partition. With
/// require_stable, a partition with an offset pending in a transaction
/// answers UNSTABLE_OFFSET_COMMIT.
pub fn offset_fetch(cx: &Context<'_>, request: &OffsetFetchRequest<'_>) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let response =
        if cx.version < 8 {
            if let Err(code) = check_coordinator(cx, &request.group_id) {
                return ResponseBody::OffsetFetch(OffsetFetchResponse {
                    error_code: code,
                    ..Default::default()
                });
            }
            let wanted = request.topics.as_ref().map(|topics| {
                topics
                    .iter()
                    .map(|t| (t.name.to_string(), t.partition_indexes.iter().collect()))
                    .collect()
            });
            let topics = committed(&state, &request.group_id, wanted)
                .into_iter()
                .map(
                    |(name, _, partitions)| offset_fetch_response::OffsetFetchResponseTopic {
                        partitions: partitions
                            .into_iter()
                            .map(|(index, (offset, epoch, metadata))| {
                                offset_fetch_response::OffsetFetchResponsePartition {
                                    partition_index: index,
                                    committed_offset: offset,
                                    committed_leader_epoch: epoch,
                                    metadata: metadata.map(Into::into),
                                    error_code: unstable(
                                        &state,
                                        request.require_stable,
                                        &request.group_id,
                                        &name,
                                        index,
                                    ),
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        name: name.into(),
                        ..Default::default()
                    },
                )
                .collect();
            OffsetFetchResponse {
                topics,
                ..Default::default()
            }
        } else {
            let by_id = cx.version >= 10;
            let groups =
                request
                    .groups
                    .iter()
                    .map(|g| {
                        if let Err(code) = check_coordinator(cx, &g.group_id) {
                            return offset_fetch_response::OffsetFetchResponseGroup {
                                group_id: owned(&g.group_id),
                                error_code: code,
                                ..Default::default()
                            };
                        }
                        // A member of a streams group must be one, at its
                        // epoch (v9+ name them).
                        let member = g.member_id.as_deref();
                        let member_code = state
                            .groups
                            .streams_fetch_code(&g.group_id, member, g.member_epoch)
                            .unwrap_or(0);
                        if cx.version >= 9 && member_code != 0 {
                            return offset_fetch_response::OffsetFetchResponseGroup {
                                group_id: owned(&g.group_id),
                                error_code: member_code,
                                ..Default::default()
                            };
                        }
                        let wanted = g.topics.as_ref().map(|topics| {
                            topics
                                .iter()
                                .map(|t| {
                                    let name = if by_id {
                                        state
                                            .topics
                                            .name_of(t.topic_id)
                                            .unwrap_or_default()
                                            .to_owned()
                                    } else {
                                        t.name.to_string()
                                    };
                                    (name, t.partition_indexes.iter().collect())
                                })
                                .collect()
                        });
                        let topics =
                            committed(&state, &g.group_id, wanted)
                                .into_iter()
                                .map(|(name, id, partitions)| {
                                    offset_fetch_response::OffsetFetchResponseTopics {
                        topic_id: if by_id { id } else { Uuid::ZERO },
                        partitions: partitions
                            .into_iter()
                            .map(|(index, (offset, epoch, metadata))| {
                                offset_fetch_response::OffsetFetchResponsePartitions {
                                    partition_index: index,
                                    committed_offset: offset,
                                    committed_leader_epoch: epoch,
                                    metadata: metadata.map(Into::into),
                                    error_code: unstable(
                                        &state,
                                        request.require_stable,
                                        &g.group_id,
                                        &name,
                                        index,
                                    ),
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        name: if by_id { Cow::Borrowed("") } else { name.into() },
                        ..Default::default()
                    }
                                })
                                .collect();
                        offset_fetch_response::OffsetFetchResponseGroup {
                            group_id: owned(&g.group_id),
                            topics,
                            ..Default::default()
                        }
                    })
                    .collect();
            OffsetFetchResponse {
                groups,
                ..Default::default()
            }
        };
    ResponseBody::OffsetFetch(response)
}

/// Deletes committed offsets of an empty group.
pub fn offset_delete(cx: &Context<'_>, request: &OffsetDeleteRequest<'_>) -> ResponseBody<'static> {
    if let Err(code) = check_group(cx, &request.group_id) {
        return ResponseBody::OffsetDelete(OffsetDeleteResponse {
            error_code: code,
            ..Default::default()
        });
    }
    let mut state = cx.shared.state();
    // As Kafka: the partitions of unknown topics, and unknown partitions
    // of known ones, are UNKNOWN_TOPIC_OR_PARTITION, listed first; the
    // group coordinator answers the others (or refuses the whole request
    // for a group it does not know).
    let mut topics: Vec<offset_delete_response::OffsetDeleteResponseTopic<'static>> = Vec::new();
    let mut known = Vec::new();
    for t in request.topics.iter() {
        let topic = state.topics.get(&t.name);
        let mut unknown = Vec::new();
        for p in t.partitions.iter() {
            if topic
                .and_then(|topic| topic.partition(p.partition_index))
                .is_some()
            {
                known.push((t.name.to_string(), p.partition_index));
            } else {
                unknown.push(offset_delete_response::OffsetDeleteResponsePartition {
                    partition_index: p.partition_index,
                    error_code: ErrorCode::UnknownTopicOrPartition.code(),
                });
            }
        }
        if !unknown.is_empty() {
            add_deleted(&mut topics, &t.name, unknown);
        }
    }
    if state.groups.get(&request.group_id).is_none() {
        return ResponseBody::OffsetDelete(OffsetDeleteResponse {
            error_code: ErrorCode::GroupIdNotFound.code(),
            ..Default::default()
        });
    }
    for (name, partition_index) in known {
        let error_code = state
            .groups
            .delete_offsets(&request.group_id, &name, partition_index)
            .unwrap_or_else(|code| code);
        let partition = offset_delete_response::OffsetDeleteResponsePartition {
            partition_index,
            error_code,
        };
        add_deleted(&mut topics, &name, vec![partition]);
    }
    ResponseBody::OffsetDelete(OffsetDeleteResponse {
        topics: topics.into(),
        ..Default::default()
    })
}

/// Adds `partitions` to topic `name` of an OffsetDelete answer, the topic
/// added at the end when it is not there yet.
fn add_deleted(
    topics: &mut Vec<offset_delete_response::OffsetDeleteResponseTopic<'static>>,
    name: &str,
    partitions: Vec<offset_delete_response::OffsetDeleteResponsePartition>,
) {
    match topics.iter_mut().find(|t| t.name == name) {
        Some(topic) => {
            let mut all = std::mem::take(&mut topic.partitions).into_vec();
            all.extend(partitions);
            topic.partitions = all.into();
        }
        None => topics.push(offset_delete_response::OffsetDeleteResponseTopic {
            name: owned(name),
            partitions: partitions.into(),
        }),
    }
}
