//! KIP-932 share groups: ShareGroupHeartbeat and ShareGroupDescribe at the
//! group's coordinator; ShareFetch (share sessions, acquisition with
//! locks and delivery counts, long polls) and ShareAcknowledge at the
//! partitions' leaders. The offsets admin is in
//! [`share_admin`](super::share_admin).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kafka_wire::messages::{
    share_acknowledge_response, share_fetch_response, share_group_describe_response,
    share_group_heartbeat_response, ShareAcknowledgeRequest, ShareAcknowledgeResponse,
    ShareFetchRequest, ShareFetchResponse, ShareGroupDescribeRequest, ShareGroupDescribeResponse,
    ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::authorized;
use super::consumer_groups::blank;
use super::members::{by_topic, describable};
use super::owned;
use super::produce::now_ms;
use crate::config::{MAX_FETCH_BYTES, MAX_FETCH_WAIT};
use crate::dispatch::Context;
use crate::state::internal_topics;
use crate::state::share_groups::{Reset, Settings, Span};
use crate::state::topics::Partition;
use crate::state::State;

/// The epoch that closes a share session.
const FINAL_EPOCH: i32 = -1;

/// The lock duration a share answer gives: the group's
/// `share.record.lock.duration.ms`.
fn lock_ms(state: &State, group: &str) -> i32 {
    i32::try_from(state.share_groups.settings(group).lock.as_millis()).unwrap_or(i32::MAX)
}

/// Kafka 4.4.0's checks of a ShareGroupHeartbeat before it looks at the
/// group, in its order: the broker's (a member id of 1 to 36 characters,
/// refused without a message), then its coordinator service's, with their
/// messages.
fn refusal(request: &ShareGroupHeartbeatRequest<'_>) -> Option<(i16, Option<String>)> {
    let invalid = |message: Option<&str>| {
        Some((ErrorCode::InvalidRequest.code(), message.map(str::to_owned)))
    };
    if !member_id_valid(&request.member_id) {
        return invalid(None);
    }
    if blank(&request.member_id) {
        return invalid(Some("MemberId can't be empty."));
    }
    if blank(&request.group_id) {
        return invalid(Some("GroupId can't be empty."));
    }
    if request.rack_id.as_deref().is_some_and(blank) {
        return invalid(Some("RackId can't be empty."));
    }
    match request.member_epoch {
        0 if request
            .subscribed_topic_names
            .as_ref()
            .is_none_or(|n| n.is_empty()) =>
        {
            invalid(Some("SubscribedTopicNames must be set in first request."))
        }
        epoch if epoch < -1 => invalid(Some("MemberEpoch is invalid.")),
        _ => None,
    }
}

/// Kafka's broker-side rule for the member id of the share group APIs: 1
/// to 36 characters (Java's, UTF-16 units).
fn member_id_valid(member_id: &str) -> bool {
    !member_id.is_empty() && member_id.encode_utf16().count() <= 36
}

/// Kafka 4.4.0's first check of a ShareFetch or ShareAcknowledge at the
/// broker: a group id and a valid member id, else INVALID_REQUEST (without
/// a message).
fn share_request_valid(group_id: Option<&str>, member_id: Option<&str>) -> bool {
    group_id.is_some() && member_id.is_some_and(member_id_valid)
}

/// A partition's bounds for acquisition: its log start, the high watermark
/// (the last stable offset under `read_committed`), and where a new share
/// partition starts by the group's `share.auto.offset.reset`.
fn span_of(partition: &Partition, settings: &Settings) -> Span {
    let log_start = partition.log.log_start_offset();
    let high_watermark = partition.log.high_watermark();
    let until = if settings.read_committed {
        partition.txns.last_stable_offset(high_watermark)
    } else {
        high_watermark
    };
    let reset_to = match settings.reset {
        Reset::Earliest => log_start,
        Reset::Latest => high_watermark,
        Reset::ByDuration(ms) => partition
            .log
            .offset_for_timestamp(now_ms().saturating_sub(ms))
            .map_or(high_watermark, |found| found.offset),
    };
    Span {
        log_start,
        until,
        reset_to,
    }
}

/// ShareGroupHeartbeat: join (epoch 0), heartbeat, leave (-1), with the
/// epochs and assignments of [`ShareGroups::heartbeat`](crate::state::share_groups::ShareGroups::heartbeat);
/// a classic or consumer group's id is GROUP_ID_NOT_FOUND.
pub fn heartbeat(
    cx: &Context<'_>,
    request: &ShareGroupHeartbeatRequest<'_>,
) -> ResponseBody<'static> {
    let fail = |code: i16, message: Option<String>| {
        ResponseBody::ShareGroupHeartbeat(ShareGroupHeartbeatResponse {
            error_code: code,
            error_message: message.map(Cow::Owned),
            member_epoch: 0,
            ..Default::default()
        })
    };
    if let Some((code, message)) = refusal(request) {
        return fail(code, message);
    }
    if cx.shared.coordinator(&request.group_id) != cx.node_id {
        return fail(ErrorCode::NotCoordinator.code(), None);
    }
    let mut guard = cx.shared.state();
    let State {
        groups,
        share_groups,
        topics,
        ..
    } = &mut *guard;
    if groups.get(&request.group_id).is_some() {
        return fail(
            ErrorCode::GroupIdNotFound.code(),
            Some(format!("Group {} is not a share group.", request.group_id)),
        );
    }
    // The share coordinators' topic exists once share groups are used.
    internal_topics::ensure(
        topics,
        internal_topics::SHARE_GROUP_STATE,
        &cx.shared.node_ids(),
    );
    let subscribed = request
        .subscribed_topic_names
        .as_ref()
        .map(|names| names.iter().map(|n| n.to_string()).collect());
    let (error, message, epoch, assignment) = share_groups.heartbeat(
        &request.group_id,
        &request.member_id,
        request.member_epoch,
        subscribed,
        topics,
        (cx.client_id, &format!("/{}", cx.client_host)),
        Instant::now(),
    );
    if error != 0 {
        return fail(error, message);
    }
    let interval = share_groups
        .settings(&request.group_id)
        .heartbeat_interval_ms;
    let assignment = assignment.map(|set| share_group_heartbeat_response::Assignment {
        topic_partitions: by_topic(&set, |topic_id, partitions| {
            share_group_heartbeat_response::TopicPartitions {
                topic_id,
                partitions: partitions.into(),
                ..Default::default()
            }
        })
        .into(),
        ..Default::default()
    });
    ResponseBody::ShareGroupHeartbeat(ShareGroupHeartbeatResponse {
        member_id: Some(owned(&request.member_id)),
        member_epoch: epoch,
        heartbeat_interval_ms: if epoch < 0 { 0 } else { interval },
        assignment,
        ..Default::default()
    })
}

/// ShareGroupDescribe: each share group's epoch and members.
pub fn describe(
    cx: &Context<'_>,
    request: &ShareGroupDescribeRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let groups = request
        .group_ids
        .iter()
        .map(|group_id| {
            let mut out = share_group_describe_response::DescribedGroup {
                group_id: owned(group_id),
                ..Default::default()
            };
            let elsewhere = state.groups.get(group_id).is_some();
            let share = state.share_groups.get(group_id);
            let group = match describable(cx, group_id, share, elsewhere, "share") {
                Ok(group) => group,
                Err(refused) => {
                    (out.error_code, out.error_message) = refused;
                    return out;
                }
            };
            out.authorized_operations =
                authorized::when(request.include_authorized_operations, authorized::GROUP);
            out.group_state = Cow::Borrowed(group.state_name());
            out.group_epoch = group.epoch;
            out.assignment_epoch = group.assignment_epoch;
            out.assignor_name = Cow::Borrowed("simple");
            out.members = group
                .members
                .iter()
                .map(|(id, m)| {
                    let topic_partitions = by_topic(&m.assignment, |topic_id, partitions| {
                        share_group_describe_response::TopicPartitions {
                            topic_id,
                            topic_name: owned(state.topics.name_of(topic_id).unwrap_or_default()),
                            partitions: partitions.into(),
                            ..Default::default()
                        }
                    });
                    share_group_describe_response::Member {
                        member_id: owned(id),
                        member_epoch: m.epoch,
                        client_id: owned(&m.client_id),
                        client_host: owned(&m.client_host),
                        subscribed_topic_names: m.subscribed.iter().map(|s| owned(s)).collect(),
                        assignment: share_group_describe_response::Assignment {
                            topic_partitions: topic_partitions.into(),
                            ..Default::default()
                        },
                        ..Default::default()
                    }
                })
                .collect::<Vec<_>>()
                .into();
            out
        })
        .collect::<Vec<_>>();
    ResponseBody::ShareGroupDescribe(ShareGroupDescribeResponse {
        groups: groups.into(),
        ..Default::default()
    })
}

/// Acknowledgement batches of a request partition, owned.
type Acks = Vec<(i64, i64, Vec<i8>)>;

/// Checks the session epoch and updates the session: the partitions to
/// read, or the error.
fn session(
    state: &mut State,
    cx: &Context<'_>,
    group: &str,
    member: &str,
    epoch: i32,
    requested: &[(Uuid, i32)],
    forgotten: &[(Uuid, i32)],
) -> Result<Vec<(Uuid, i32)>, i16> {
    let key = (cx.node_id, group.to_owned(), member.to_owned());
    let sessions = &mut state.share_groups.sessions;
    match epoch {
        0 => {
            let session = sessions.entry(key).or_default();
            session.epoch = 1;
            session.partitions = requested.iter().copied().collect();
        }
        FINAL_EPOCH => {
            sessions.remove(&key);
            return Ok(Vec::new());
        }
        e => {
            // Kafka 4.4.0 answers a session it does not know with
            // INVALID_SHARE_SESSION_EPOCH.
            let session = sessions
                .get_mut(&key)
                .ok_or(ErrorCode::InvalidShareSessionEpoch.code())?;
            if session.epoch != e {
                return Err(ErrorCode::InvalidShareSessionEpoch.code());
            }
            session.epoch = e.wrapping_add(1).max(1);
            session.partitions.extend(requested.iter().copied());
            for tp in forgotten {
                session.partitions.remove(tp);
            }
        }
    }
    Ok(sessions
        .get(&(cx.node_id, group.to_owned(), member.to_owned()))
        .map(|s| s.partitions.iter().copied().collect())
        .unwrap_or_default())
}

/// ShareFetch: acknowledgements first, then records acquired for the
/// member from the session's partitions this broker leads, waiting up to
/// max_wait_ms for some.
pub async fn fetch(cx: &Context<'_>, request: &ShareFetchRequest<'_>) -> ResponseBody<'static> {
    // A refused request's answer has no acquisition lock timeout, as Kafka's.
    let refused = |code: i16| {
        ResponseBody::ShareFetch(ShareFetchResponse {
            error_code: code,
            ..Default::default()
        })
    };
    if !share_request_valid(request.group_id.as_deref(), request.member_id.as_deref()) {
        return refused(ErrorCode::InvalidRequest.code());
    }
    let group = request.group_id.as_deref().unwrap_or_default().to_owned();
    let member = request.member_id.as_deref().unwrap_or_default().to_owned();
    let mut requested = Vec::new();
    let mut acks: Vec<((Uuid, i32), Acks)> = Vec::new();
    for t in request.topics.iter() {
        for p in t.partitions.iter() {
            requested.push((t.topic_id, p.partition_index));
            let batches: Acks = p
                .acknowledgement_batches
                .iter()
                .map(|b| {
                    (
                        b.first_offset,
                        b.last_offset,
                        b.acknowledge_types.iter().collect(),
                    )
                })
                .collect();
            if !batches.is_empty() {
                acks.push(((t.topic_id, p.partition_index), batches));
            }
        }
    }
    let forgotten: Vec<(Uuid, i32)> = request
        .forgotten_topics_data
        .iter()
        .flat_map(|t| {
            let id = t.topic_id;
            t.partitions
                .iter()
                .map(move |p| (id, p))
                .collect::<Vec<_>>()
        })
        .collect();
    let (wanted, ack_errors) = {
        // The partition leader does not check membership, as in Kafka.
        let mut state = cx.shared.state();
        let wanted = match session(
            &mut state,
            cx,
            &group,
            &member,
            request.share_session_epoch,
            &requested,
            &forgotten,
        ) {
            Ok(wanted) => wanted,
            Err(code) => return refused(code),
        };
        let ack_errors: Vec<((Uuid, i32), i16)> = acks
            .iter()
            .map(|(tp, batches)| {
                (
                    *tp,
                    state
                        .share_groups
                        .acknowledge(&group, &member, *tp, batches),
                )
            })
            .collect();
        (wanted, ack_errors)
    };
    let max_records = usize::try_from(request.max_records)
        .ok()
        .filter(|n| *n > 0)
        .unwrap_or(500);
    let wait =
        Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0)).min(MAX_FETCH_WAIT);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let appended = cx.shared.appended.notified();
        tokio::pin!(appended);
        appended.as_mut().enable();
        let ready = {
            let state = cx.shared.state();
            let settings = state.share_groups.settings(&group);
            let now = Instant::now();
            wanted.iter().any(|(topic, p)| {
                let Some(partition) = state
                    .topics
                    .name_of(*topic)
                    .and_then(|n| state.topics.get(n))
                    .and_then(|t| t.partition(*p))
                else {
                    return true;
                };
                partition.leader != cx.node_id
                    || state.share_groups.has_available(
                        &group,
                        (*topic, *p),
                        span_of(partition, &settings).until,
                        now,
                    )
            })
        };
        if ready || wanted.is_empty() || tokio::time::Instant::now() >= deadline {
            break;
        }
        let _ = tokio::time::timeout_at(deadline, appended).await;
    }
    let mut state = cx.shared.state();
    let settings = state.share_groups.settings(&group);
    let now = Instant::now();
    let mut budget = usize::try_from(request.max_bytes)
        .unwrap_or(0)
        .min(MAX_FETCH_BYTES);
    let mut left = max_records;
    let mut responses: Vec<share_fetch_response::ShareFetchableTopicResponse<'static>> = Vec::new();
    let mut tps: BTreeSet<(Uuid, i32)> = wanted.iter().copied().collect();
    tps.extend(ack_errors.iter().map(|(tp, _)| *tp));
    for (topic, index) in tps {
        let mut data = share_fetch_response::PartitionData {
            partition_index: index,
            records: Some(Cow::Borrowed(&[])),
            ..Default::default()
        };
        if let Some((_, code)) = ack_errors.iter().find(|(tp, _)| *tp == (topic, index)) {
            data.acknowledge_error_code = *code;
        }
        let name = state.topics.name_of(topic).map(str::to_owned);
        let info = name
            .as_deref()
            .and_then(|n| state.topics.get(n))
            .and_then(|t| t.partition(index))
            .map(|p| (p.leader, span_of(p, &settings)));
        match info {
            None => data.error_code = ErrorCode::UnknownTopicOrPartition.code(),
            Some((leader, _)) if leader != cx.node_id => {
                data.error_code = ErrorCode::NotLeaderOrFollower.code();
                data.current_leader = share_fetch_response::LeaderIdAndEpoch {
                    leader_id: leader,
                    leader_epoch: 0,
                    ..Default::default()
                };
            }
            Some((_, span)) if wanted.contains(&(topic, index)) && left > 0 => {
                let runs =
                    state
                        .share_groups
                        .acquire(&group, &member, (topic, index), span, left, now);
                if let Some(&(first, _, _)) = runs.first() {
                    let last = runs.last().map_or(first, |r| r.1);
                    left = left.saturating_sub(
                        runs.iter()
                            .map(|(f, l, _)| usize::try_from(l - f + 1).unwrap_or(0))
                            .sum(),
                    );
                    let records = name
                        .as_deref()
                        .and_then(|n| state.topics.get(n))
                        .and_then(|t| t.partition(index))
                        .map(|p| p.log.read(first, last + 1, budget, true))
                        .and_then(Result::ok)
                        .unwrap_or_default();
                    budget = budget.saturating_sub(records.len());
                    data.records = Some(Cow::Owned(records));
                    data.acquired_records = runs
                        .into_iter()
                        .map(|(first_offset, last_offset, delivery_count)| {
                            share_fetch_response::AcquiredRecords {
                                first_offset,
                                last_offset,
                                delivery_count,
                                ..Default::default()
                            }
                        })
                        .collect::<Vec<_>>()
                        .into();
                }
            }
            Some(_) => {}
        }
        if responses.last().is_none_or(|t| t.topic_id != topic) {
            responses.push(share_fetch_response::ShareFetchableTopicResponse {
                topic_id: topic,
                ..Default::default()
            });
        }
        if let Some(t) = responses.last_mut() {
            t.partitions.push(data);
        }
    }
    ResponseBody::ShareFetch(ShareFetchResponse {
        acquisition_lock_timeout_ms: lock_ms(&state, &group),
        responses: responses.into(),
        ..Default::default()
    })
}

/// ShareAcknowledge: acknowledgements alone (a session epoch of -1 also
/// closes the session).
pub fn acknowledge(
    cx: &Context<'_>,
    request: &ShareAcknowledgeRequest<'_>,
) -> ResponseBody<'static> {
    // A refused request's answer has no acquisition lock timeout, as Kafka's.
    let fail = |code: ErrorCode| {
        ResponseBody::ShareAcknowledge(ShareAcknowledgeResponse {
            error_code: code.code(),
            ..Default::default()
        })
    };
    if !share_request_valid(request.group_id.as_deref(), request.member_id.as_deref()) {
        return fail(ErrorCode::InvalidRequest);
    }
    let group = request.group_id.as_deref().unwrap_or_default();
    let member = request.member_id.as_deref().unwrap_or_default();
    let mut state = cx.shared.state();
    let lock = lock_ms(&state, group);
    let key = (cx.node_id, group.to_owned(), member.to_owned());
    match request.share_session_epoch {
        FINAL_EPOCH => {
            state.share_groups.sessions.remove(&key);
        }
        0 => return fail(ErrorCode::InvalidShareSessionEpoch),
        e => match state.share_groups.sessions.get_mut(&key) {
            None => return fail(ErrorCode::InvalidShareSessionEpoch),
            Some(s) if s.epoch != e => return fail(ErrorCode::InvalidShareSessionEpoch),
            Some(s) => s.epoch = e.wrapping_add(1).max(1),
        },
    }
    let responses: Vec<_> = request
        .topics
        .iter()
        .map(
            |t| share_acknowledge_response::ShareAcknowledgeTopicResponse {
                topic_id: t.topic_id,
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| {
                        let batches: Acks = p
                            .acknowledgement_batches
                            .iter()
                            .map(|b| {
                                (
                                    b.first_offset,
                                    b.last_offset,
                                    b.acknowledge_types.iter().collect(),
                                )
                            })
                            .collect();
                        share_acknowledge_response::PartitionData {
                            partition_index: p.partition_index,
                            error_code: state.share_groups.acknowledge(
                                group,
                                member,
                                (t.topic_id, p.partition_index),
                                &batches,
                            ),
                            ..Default::default()
                        }
                    })
                    .collect::<Vec<_>>()
                    .into(),
                ..Default::default()
            },
        )
        .collect();
    ResponseBody::ShareAcknowledge(ShareAcknowledgeResponse {
        acquisition_lock_timeout_ms: lock,
        responses: responses.into(),
        ..Default::default()
    })
}
