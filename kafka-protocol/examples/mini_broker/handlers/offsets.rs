//! OffsetCommit and OffsetFetch: committed offsets kept per group.

use kafka_wire::messages::{
    offset_commit_response, offset_fetch_response, OffsetCommitRequest, OffsetCommitResponse,
    OffsetFetchRequest, OffsetFetchResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::ResponseBody;

use super::strings::owned;
use crate::broker::Broker;
use crate::errors;
use crate::groups::{Committed, Groups};
use crate::log::Log;

/// Stores the offsets when the member and generation check out (topics by
/// name before v10, by id from v10).
pub fn offset_commit(
    broker: &Broker,
    request: &OffsetCommitRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let log = broker.log();
    let mut groups = broker.groups();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let name = topic_name(&log, &t.name, t.topic_id, version >= 10);
            let offsets = t
                .partitions
                .iter()
                .map(|p| {
                    let key = (name.clone().unwrap_or_default(), p.partition_index);
                    let value = (
                        p.committed_offset,
                        p.committed_leader_epoch,
                        p.committed_metadata.as_deref().map(str::to_owned),
                    );
                    (key, value)
                })
                .collect();
            let error_code = match name {
                None => errors::UNKNOWN_TOPIC_ID,
                Some(_) => groups.commit(
                    &request.group_id,
                    &request.member_id,
                    request.generation_id_or_member_epoch,
                    offsets,
                ),
            };
            offset_commit_response::OffsetCommitResponseTopic {
                name: owned(&t.name),
                topic_id: t.topic_id,
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| offset_commit_response::OffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::OffsetCommit(OffsetCommitResponse {
        topics,
        ..Default::default()
    })
}

/// Committed offsets (-1 where none) of one group (v1-7) or of several (v8+);
/// a null topic list means every partition with a committed offset.
pub fn offset_fetch(
    broker: &Broker,
    request: &OffsetFetchRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let log = broker.log();
    let groups = broker.groups();
    let response = if version < 8 {
        let wanted: Option<Vec<(String, Vec<i32>)>> = request.topics.as_ref().map(|topics| {
            topics
                .iter()
                .map(|t| (t.name.to_string(), t.partition_indexes.iter().collect()))
                .collect()
        });
        let topics = committed(&groups, &request.group_id, wanted)
            .into_iter()
            .map(
                |(name, partitions)| offset_fetch_response::OffsetFetchResponseTopic {
                    name: name.into(),
                    partitions: partitions
                        .into_iter()
                        .map(|(index, (offset, epoch, metadata))| {
                            offset_fetch_response::OffsetFetchResponsePartition {
                                partition_index: index,
                                committed_offset: offset,
                                committed_leader_epoch: epoch,
                                metadata: Some(metadata.unwrap_or_default().into()),
                                ..Default::default()
                            }
                        })
                        .collect(),
                    ..Default::default()
                },
            )
            .collect();
        OffsetFetchResponse {
            topics,
            ..Default::default()
        }
    } else {
        let by_id = version >= 10;
        let groups_out = request
            .groups
            .iter()
            .map(|g| {
                let wanted = g.topics.as_ref().map(|topics| {
                    topics
                        .iter()
                        .map(|t| {
                            let name = topic_name(&log, &t.name, t.topic_id, by_id);
                            (
                                name.unwrap_or_default(),
                                t.partition_indexes.iter().collect(),
                            )
                        })
                        .collect()
                });
                let topics = committed(&groups, &g.group_id, wanted)
                    .into_iter()
                    .map(
                        |(name, partitions)| offset_fetch_response::OffsetFetchResponseTopics {
                            topic_id: if by_id {
                                log.topic(&name).map_or(Uuid::ZERO, |t| t.id)
                            } else {
                                Uuid::ZERO
                            },
                            name: name.into(),
                            partitions: partitions
                                .into_iter()
                                .map(|(index, (offset, epoch, metadata))| {
                                    offset_fetch_response::OffsetFetchResponsePartitions {
                                        partition_index: index,
                                        committed_offset: offset,
                                        committed_leader_epoch: epoch,
                                        metadata: Some(metadata.unwrap_or_default().into()),
                                        ..Default::default()
                                    }
                                })
                                .collect(),
                            ..Default::default()
                        },
                    )
                    .collect();
                offset_fetch_response::OffsetFetchResponseGroup {
                    group_id: owned(&g.group_id),
                    topics,
                    ..Default::default()
                }
            })
            .collect();
        OffsetFetchResponse {
            groups: groups_out,
            ..Default::default()
        }
    };
    ResponseBody::OffsetFetch(response)
}

/// The committed offsets of the wanted partitions, or of every committed
/// partition when `wanted` is None, grouped by topic.
fn committed(
    groups: &Groups,
    group_id: &str,
    wanted: Option<Vec<(String, Vec<i32>)>>,
) -> Vec<(String, Vec<(i32, Committed)>)> {
    let wanted = wanted.unwrap_or_else(|| {
        let mut by_topic: Vec<(String, Vec<i32>)> = Vec::new();
        for (topic, partition) in groups.committed_partitions(group_id) {
            match by_topic.last_mut() {
                Some((name, partitions)) if *name == topic => partitions.push(partition),
                _ => by_topic.push((topic, vec![partition])),
            }
        }
        by_topic
    });
    wanted
        .into_iter()
        .map(|(topic, partitions)| {
            let offsets = partitions
                .into_iter()
                .map(|p| {
                    let committed = groups
                        .committed(group_id, &topic, p)
                        .unwrap_or((-1, -1, None));
                    (p, committed)
                })
                .collect();
            (topic, offsets)
        })
        .collect()
}

/// The topic's name: as given before the topic-id versions, else looked up.
fn topic_name(log: &Log, name: &str, id: Uuid, by_id: bool) -> Option<String> {
    if by_id {
        log.topic_by_id(id).map(|(name, _)| name.to_owned())
    } else {
        Some(name.to_owned())
    }
}
