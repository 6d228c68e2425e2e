//! FindCoordinator and the classic group APIs: JoinGroup, SyncGroup,
//! Heartbeat, LeaveGroup, ListGroups, DescribeGroups, DeleteGroups. Each
//! group has one coordinator among the brokers; the others answer
//! NOT_COORDINATOR.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use kafka_wire::messages::{
    delete_groups_response, describe_groups_response, find_coordinator_response,
    join_group_response, leave_group_response, list_groups_response, DeleteGroupsRequest,
    DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse, FindCoordinatorRequest,
    FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
    JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, ListGroupsRequest,
    ListGroupsResponse, SyncGroupRequest, SyncGroupResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::answers::{no_coordinator, no_coordinator_for};
use super::authorized;
use super::error_messages::kafka_message;
use super::owned;
use crate::dispatch::Context;
use crate::state::groups::{GroupState, JoinRequest, Pending, SyncRequest};
use crate::state::internal_topics;
use crate::state::Shared;

/// Key types of FindCoordinator: groups, transactional ids, and share
/// partitions (`group:topicId:partition`, from v6).
const GROUP_KEY: i8 = 0;
const TRANSACTION_KEY: i8 = 1;
const SHARE_KEY: i8 = 2;
const SHARE_KEY_SINCE: i16 = 6;

/// Whether `key` is a share partition's key as Kafka's
/// `SharePartitionKey.getInstance` reads it: a group, a topic id and a
/// partition number, apart by colons.
fn share_key_parses(key: &str) -> bool {
    let parts: Vec<&str> = key.split(':').collect();
    match parts.as_slice() {
        [group, topic, partition] => {
            !group.is_empty()
                && topic.parse::<kafka_wire::runtime::Uuid>().is_ok()
                && partition.parse::<i32>().is_ok()
        }
        _ => false,
    }
}

/// Whether this broker coordinates `group_id`; NOT_COORDINATOR otherwise.
pub fn check_coordinator(cx: &Context<'_>, group_id: &str) -> Result<(), i16> {
    if cx.shared.coordinator(group_id) == cx.node_id {
        Ok(())
    } else {
        Err(ErrorCode::NotCoordinator.code())
    }
}

/// Kafka's first check of a classic group's JoinGroup, SyncGroup,
/// Heartbeat, LeaveGroup and OffsetDelete: the empty group id is
/// INVALID_GROUP_ID on any broker (before the coordinator is looked at);
/// then NOT_COORDINATOR where this broker does not coordinate the group.
/// OffsetCommit and OffsetFetch take the empty group as any other.
pub(crate) fn check_group(cx: &Context<'_>, group_id: &str) -> Result<(), i16> {
    if group_id.is_empty() {
        return Err(ErrorCode::InvalidGroupId.code());
    }
    check_coordinator(cx, group_id)
}

/// The coordinator of each key, a group, a transactional id or a share
/// partition: one (v0-3) or many (v4+). Any group or transactional id has
/// one, the empty one too, as Kafka hashes any string.
pub fn find_coordinator(
    cx: &Context<'_>,
    request: &FindCoordinatorRequest<'_>,
) -> ResponseBody<'static> {
    // The coordinators' topic exists from the first look-up on, as Kafka
    // creates it then.
    let internal = match request.key_type {
        GROUP_KEY => Some(internal_topics::CONSUMER_OFFSETS),
        TRANSACTION_KEY => Some(internal_topics::TRANSACTION_STATE),
        SHARE_KEY if cx.version >= SHARE_KEY_SINCE => Some(internal_topics::SHARE_GROUP_STATE),
        _ => None,
    };
    if let Some(name) = internal {
        let nodes = cx.shared.node_ids();
        internal_topics::ensure(&mut cx.shared.state().topics, name, &nodes);
    }
    // A key type Kafka does not know is refused with its message; a share
    // key below v6 or one that does not parse, without one from v4.
    let known_type = matches!(request.key_type, GROUP_KEY | TRANSACTION_KEY | SHARE_KEY);
    let locate = |key: &str| -> Result<(i32, String, i32), i16> {
        let served = match request.key_type {
            GROUP_KEY | TRANSACTION_KEY => true,
            SHARE_KEY => cx.version >= SHARE_KEY_SINCE && share_key_parses(key),
            _ => false,
        };
        if !served {
            return Err(ErrorCode::InvalidRequest.code());
        }
        let node = cx.shared.coordinator(key);
        let broker = cx
            .shared
            .broker(node)
            .ok_or(ErrorCode::CoordinatorNotAvailable.code())?;
        Ok((node, broker.host, i32::from(broker.port)))
    };
    let response = if cx.version < 4 {
        match locate(&request.key) {
            // Kafka writes the code's name as the message of a success.
            Ok((node_id, host, port)) => FindCoordinatorResponse {
                node_id,
                host: host.into(),
                port,
                error_message: (cx.version >= 1).then_some(Cow::Borrowed("NONE")),
                ..Default::default()
            },
            Err(code) => no_coordinator(code),
        }
    } else {
        FindCoordinatorResponse {
            coordinators: request
                .coordinator_keys
                .iter()
                .map(|key| match locate(key) {
                    Ok((node_id, host, port)) => find_coordinator_response::Coordinator {
                        key: owned(key),
                        node_id,
                        host: host.into(),
                        port,
                        ..Default::default()
                    },
                    Err(code) => {
                        let mut refused = no_coordinator_for(key, code);
                        if !known_type {
                            refused.error_message = kafka_message(code).map(Cow::Borrowed);
                        }
                        refused
                    }
                })
                .collect(),
            ..Default::default()
        }
    };
    ResponseBody::FindCoordinator(response)
}

fn millis(ms: i32) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// Joins the group, waiting until the rebalance completes. The protocol
/// name is nullable only from v7: below, Kafka writes "" for none.
pub async fn join_group(cx: &Context<'_>, request: &JoinGroupRequest<'_>) -> ResponseBody<'static> {
    let mut response = join(cx, request).await;
    if let ResponseBody::JoinGroup(r) = &mut response {
        if cx.version < 7 && r.protocol_name.is_none() {
            r.protocol_name = Some(Cow::Borrowed(""));
        }
    }
    response
}

async fn join(cx: &Context<'_>, request: &JoinGroupRequest<'_>) -> ResponseBody<'static> {
    // No protocol name (null from v7, "" below: `join_group`).
    let failed = |code: i16, member_id: &str| {
        ResponseBody::JoinGroup(JoinGroupResponse {
            error_code: code,
            generation_id: -1,
            member_id: owned(member_id),
            protocol_type: None,
            protocol_name: None,
            ..Default::default()
        })
    };
    // As Kafka: the group id, then the session timeout, then the
    // coordinator.
    if request.group_id.is_empty() {
        return failed(ErrorCode::InvalidGroupId.code(), &request.member_id);
    }
    let config = &cx.shared.config;
    let session = millis(request.session_timeout_ms);
    if session < config.min_session_timeout || session > config.max_session_timeout {
        return failed(ErrorCode::InvalidSessionTimeout.code(), &request.member_id);
    }
    if let Err(code) = check_coordinator(cx, &request.group_id) {
        return failed(code, &request.member_id);
    }
    // v0 has no rebalance timeout: it is the session timeout.
    let rebalance = if cx.version == 0 {
        session
    } else {
        millis(request.rebalance_timeout_ms)
    };
    let pending = cx.shared.state().groups.join(JoinRequest {
        group_id: request.group_id.to_string(),
        member_id: request.member_id.to_string(),
        group_instance_id: request.group_instance_id.as_deref().map(str::to_owned),
        client_id: cx.client_id.to_owned(),
        client_host: format!("/{}", cx.client_host),
        protocol_type: request.protocol_type.to_string(),
        protocols: request
            .protocols
            .iter()
            .map(|p| (p.name.to_string(), p.metadata.to_vec()))
            .collect(),
        session_timeout: session,
        rebalance_timeout: rebalance,
        require_known_member_id: cx.version >= 4,
        supports_skip_assignment: cx.version >= 9,
    });
    let outcome = match pending {
        Pending::Ready(outcome) => outcome,
        Pending::Wait(receiver, timer) => {
            if let Some((rebalance_id, wait)) = timer {
                schedule_rebalance_timeout(
                    cx.shared,
                    request.group_id.to_string(),
                    rebalance_id,
                    wait,
                );
            }
            match receiver.await {
                Ok(outcome) => outcome,
                Err(_) => return failed(ErrorCode::UnknownMemberId.code(), &request.member_id),
            }
        }
    };
    ResponseBody::JoinGroup(JoinGroupResponse {
        error_code: outcome.error_code,
        generation_id: if outcome.error_code == 0 {
            outcome.generation
        } else {
            -1
        },
        protocol_type: outcome.protocol_type.map(Into::into),
        protocol_name: outcome.protocol.map(Into::into),
        leader: outcome.leader.into(),
        skip_assignment: outcome.skip_assignment,
        member_id: outcome.member_id.into(),
        members: outcome
            .members
            .into_iter()
            .map(|(member_id, group_instance_id, metadata)| {
                join_group_response::JoinGroupResponseMember {
                    member_id: member_id.into(),
                    group_instance_id: group_instance_id.map(Into::into),
                    metadata: metadata.into(),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    })
}

/// After `wait`, a rebalance stops waiting for members that did not join.
fn schedule_rebalance_timeout(
    shared: &Arc<Shared>,
    group_id: String,
    rebalance: u64,
    wait: Duration,
) {
    let shared = Arc::downgrade(shared);
    tokio::spawn(async move {
        tokio::time::sleep(wait).await;
        if let Some(shared) = shared.upgrade() {
            shared
                .state()
                .groups
                .rebalance_timeout(&group_id, rebalance);
        }
    });
}

/// The leader hands out assignments; the others wait for theirs. From v5
/// the protocol type and name are mandatory: without either Kafka answers
/// INCONSISTENT_GROUP_PROTOCOL before it looks at the group.
pub async fn sync_group(cx: &Context<'_>, request: &SyncGroupRequest<'_>) -> ResponseBody<'static> {
    let failed = |code: i16| {
        ResponseBody::SyncGroup(SyncGroupResponse {
            error_code: code,
            ..Default::default()
        })
    };
    // From v5 the protocol type and name are mandatory, checked first.
    if cx.version >= 5 && (request.protocol_type.is_none() || request.protocol_name.is_none()) {
        return failed(ErrorCode::InconsistentGroupProtocol.code());
    }
    if let Err(code) = check_group(cx, &request.group_id) {
        return failed(code);
    }
    let assignments = request
        .assignments
        .iter()
        .map(|a| (a.member_id.to_string(), a.assignment.to_vec()))
        .collect();
    let pending = cx.shared.state().groups.sync(SyncRequest {
        group_id: &request.group_id,
        member_id: &request.member_id,
        group_instance_id: request.group_instance_id.as_deref(),
        generation: request.generation_id,
        protocol_type: request.protocol_type.as_deref(),
        protocol_name: request.protocol_name.as_deref(),
        assignments,
    });
    let outcome = match pending {
        Pending::Ready(outcome) => outcome,
        Pending::Wait(receiver, _) => match receiver.await {
            Ok(outcome) => outcome,
            Err(_) => return failed(ErrorCode::UnknownMemberId.code()),
        },
    };
    ResponseBody::SyncGroup(SyncGroupResponse {
        error_code: outcome.error_code,
        protocol_type: outcome.protocol_type.map(Into::into),
        protocol_name: outcome.protocol.map(Into::into),
        assignment: outcome.assignment.into(),
        ..Default::default()
    })
}

/// Keeps a member alive, or tells it to rejoin.
pub fn heartbeat(cx: &Context<'_>, request: &HeartbeatRequest<'_>) -> ResponseBody<'static> {
    let error_code = match check_group(cx, &request.group_id) {
        Err(code) => code,
        Ok(()) => cx.shared.state().groups.heartbeat(
            &request.group_id,
            &request.member_id,
            request.group_instance_id.as_deref(),
            request.generation_id,
        ),
    };
    ResponseBody::Heartbeat(HeartbeatResponse {
        error_code,
        ..Default::default()
    })
}

/// One member (v0-2) or several (v3+) leave.
pub fn leave_group(cx: &Context<'_>, request: &LeaveGroupRequest<'_>) -> ResponseBody<'static> {
    if let Err(code) = check_group(cx, &request.group_id) {
        return ResponseBody::LeaveGroup(LeaveGroupResponse {
            error_code: code,
            ..Default::default()
        });
    }
    let mut timers = Vec::new();
    let response = {
        let mut state = cx.shared.state();
        let mut leave = |member_id: &str, instance: Option<&str>| {
            let (code, timer) = state.groups.leave(&request.group_id, member_id, instance);
            timers.extend(timer);
            code
        };
        if cx.version < 3 {
            LeaveGroupResponse {
                error_code: leave(&request.member_id, None),
                ..Default::default()
            }
        } else {
            LeaveGroupResponse {
                members: request
                    .members
                    .iter()
                    .map(|m| leave_group_response::MemberResponse {
                        member_id: owned(&m.member_id),
                        group_instance_id: m.group_instance_id.as_deref().map(owned),
                        error_code: leave(&m.member_id, m.group_instance_id.as_deref()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }
        }
    };
    for (rebalance, wait) in timers {
        schedule_rebalance_timeout(cx.shared, request.group_id.to_string(), rebalance, wait);
    }
    ResponseBody::LeaveGroup(response)
}

/// The groups this broker coordinates, filtered by state (v4+) and type
/// (v5+: only "classic" groups exist here).
pub fn list_groups(cx: &Context<'_>, request: &ListGroupsRequest<'_>) -> ResponseBody<'static> {
    let state = cx.shared.state();
    // KIP-848 consumer groups are of type "consumer", share groups of
    // type "share", each with their own states.
    let classic = state
        .groups
        .iter()
        .map(|(id, g)| match (&g.consumer, &g.streams) {
            (Some(c), _) => (id, g.protocol_type.as_str(), c.state_name(), "consumer"),
            (None, Some(s)) => (id, "streams", s.state_name(), "streams"),
            (None, None) => (id, g.protocol_type.as_str(), g.state.name(), "classic"),
        });
    let share = state
        .share_groups
        .iter()
        .map(|(id, g)| (id, "share", g.state_name(), "share"));
    let mut groups: Vec<_> = classic
        .chain(share)
        .filter(|(id, _, _, _)| cx.shared.coordinator(id) == cx.node_id)
        .filter(|(_, _, state, _)| {
            request.states_filter.is_empty()
                || request.states_filter.iter().any(|s| {
                    s.eq_ignore_ascii_case(state)
                        || (*state == "NotReady" && s.eq_ignore_ascii_case("not_ready"))
                })
        })
        .filter(|(_, _, _, kind)| {
            request.types_filter.is_empty()
                || request
                    .types_filter
                    .iter()
                    .any(|t| t.eq_ignore_ascii_case(kind))
        })
        .map(
            |(id, protocol, state, kind)| list_groups_response::ListedGroup {
                group_id: owned(id),
                protocol_type: owned(protocol),
                group_state: state.into(),
                group_type: kind.into(),
                ..Default::default()
            },
        )
        .collect();
    groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    ResponseBody::ListGroups(ListGroupsResponse {
        groups: groups.into(),
        ..Default::default()
    })
}

/// Each group's state and members ("Dead" for an unknown group, as Kafka
/// describes one).
pub fn describe_groups(
    cx: &Context<'_>,
    request: &DescribeGroupsRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let groups = request
        .groups
        .iter()
        .map(|id| {
            let mut out = describe_groups_response::DescribedGroup {
                group_id: owned(id),
                ..Default::default()
            };
            if let Err(code) = check_coordinator(cx, id) {
                out.error_code = code;
                return out;
            }
            // Kafka 4.4.0 gives every operation when asked, unless it
            // answers with an error.
            out.authorized_operations =
                authorized::when(request.include_authorized_operations, authorized::GROUP);
            // A group of another type (share, streams) is described by its
            // own API; DescribeGroups answers it as Kafka does one it does
            // not know, naming its type from v6.
            let other_type = state.share_groups.contains(id)
                || state.groups.get(id).is_some_and(|g| g.streams.is_some());
            match state.groups.get(id).filter(|g| g.streams.is_none()) {
                None => {
                    out.group_state = "Dead".into();
                    if cx.version >= 6 {
                        out.error_code = ErrorCode::GroupIdNotFound.code();
                        out.authorized_operations = authorized::NOT_ASKED;
                        out.error_message = Some(if other_type {
                            format!("Group {id} is not a classic group.").into()
                        } else {
                            format!("Group {id} not found.").into()
                        });
                    }
                }
                Some(group) => {
                    out.group_state = group.state.name().into();
                    out.protocol_type = owned(&group.protocol_type);
                    let stable = group.state == GroupState::Stable;
                    out.protocol_data = group.protocol.as_deref().map(owned).unwrap_or_default();
                    out.members = group
                        .members
                        .iter()
                        .map(|m| {
                            let metadata = m
                                .protocols
                                .iter()
                                .find(|(n, _)| Some(n) == group.protocol.as_ref())
                                .map(|(_, md)| md.clone())
                                .unwrap_or_default();
                            describe_groups_response::DescribedGroupMember {
                                member_id: owned(&m.id),
                                group_instance_id: m.group_instance_id.as_deref().map(owned),
                                client_id: owned(&m.client_id),
                                client_host: owned(&m.client_host),
                                member_metadata: metadata.into(),
                                member_assignment: if stable {
                                    m.assignment.clone()
                                } else {
                                    Vec::new()
                                }
                                .into(),
                                ..Default::default()
                            }
                        })
                        .collect();
                }
            }
            out
        })
        .collect();
    ResponseBody::DescribeGroups(DescribeGroupsResponse {
        groups,
        ..Default::default()
    })
}

/// Deletes empty groups with their offsets.
pub fn delete_groups(cx: &Context<'_>, request: &DeleteGroupsRequest<'_>) -> ResponseBody<'static> {
    let mut state = cx.shared.state();
    let results = request
        .groups_names
        .iter()
        .map(|id| delete_groups_response::DeletableGroupResult {
            group_id: owned(id),
            error_code: match check_coordinator(cx, id) {
                Err(code) => code,
                Ok(()) if state.share_groups.contains(id) => state.share_groups.delete_group(id),
                Ok(()) => state.groups.delete(id),
            },
            ..Default::default()
        })
        .collect();
    ResponseBody::DeleteGroups(DeleteGroupsResponse {
        results,
        ..Default::default()
    })
}
