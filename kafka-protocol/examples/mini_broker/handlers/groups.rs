//! FindCoordinator, JoinGroup, SyncGroup, Heartbeat and LeaveGroup: this
//! broker coordinates every group (see `groups.rs` for the state machine).

use std::borrow::Cow;
use std::time::Duration;

use kafka_wire::messages::{
    find_coordinator_response, join_group_response, leave_group_response, FindCoordinatorRequest,
    FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
    JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, SyncGroupRequest, SyncGroupResponse,
};
use kafka_wire::ResponseBody;

use super::strings::owned;
use crate::broker::{Broker, NODE_ID};
use crate::groups::{JoinRequest, Pending, MAX_REBALANCE_WAIT};

/// This broker, for the one key (v0-3) or each key (v4+).
pub fn find_coordinator(
    broker: &Broker,
    request: &FindCoordinatorRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let host = broker.host();
    let response = if version < 4 {
        FindCoordinatorResponse {
            node_id: NODE_ID,
            host: host.into(),
            port: broker.port(),
            ..Default::default()
        }
    } else {
        FindCoordinatorResponse {
            coordinators: request
                .coordinator_keys
                .iter()
                .map(|key| find_coordinator_response::Coordinator {
                    key: owned(key),
                    node_id: NODE_ID,
                    host: owned(&host),
                    port: broker.port(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    };
    ResponseBody::FindCoordinator(response)
}

/// Joins the group, waiting until the rebalance completes.
pub async fn join_group(
    broker: &Broker,
    request: &JoinGroupRequest<'_>,
    client_id: &str,
) -> ResponseBody<'static> {
    let pending = broker.groups().join(JoinRequest {
        group_id: request.group_id.to_string(),
        member_id: request.member_id.to_string(),
        group_instance_id: request.group_instance_id.as_deref().map(str::to_owned),
        client_id: client_id.to_owned(),
        protocol_type: request.protocol_type.to_string(),
        protocols: request
            .protocols
            .iter()
            .map(|p| (p.name.to_string(), p.metadata.to_vec()))
            .collect(),
        session_timeout: millis(request.session_timeout_ms),
    });
    let outcome = match pending {
        Pending::Ready(outcome) => outcome,
        Pending::Wait(receiver, timer) => {
            if let Some((group_id, rebalance)) = timer {
                let wait = millis(request.rebalance_timeout_ms).min(MAX_REBALANCE_WAIT);
                schedule_rebalance_timeout(broker, group_id, rebalance, wait);
            }
            receiver.await.unwrap_or_default()
        }
    };
    ResponseBody::JoinGroup(JoinGroupResponse {
        error_code: outcome.error_code,
        generation_id: outcome.generation,
        protocol_type: Some(outcome.protocol_type.into()),
        protocol_name: outcome.protocol.map(Cow::Owned),
        leader: outcome.leader.into(),
        member_id: outcome.member_id.into(),
        members: outcome
            .members
            .into_iter()
            .map(|(member_id, group_instance_id, metadata)| {
                join_group_response::JoinGroupResponseMember {
                    member_id: member_id.into(),
                    group_instance_id: group_instance_id.map(Cow::Owned),
                    metadata: metadata.into(),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    })
}

/// The rebalance stops waiting for absent members after `wait`.
fn schedule_rebalance_timeout(broker: &Broker, group_id: String, rebalance: u64, wait: Duration) {
    let groups = broker.groups_handle();
    tokio::spawn(async move {
        tokio::time::sleep(wait).await;
        groups
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .rebalance_timeout(&group_id, rebalance);
    });
}

/// The leader sends assignments; the others wait for theirs.
pub async fn sync_group(broker: &Broker, request: &SyncGroupRequest<'_>) -> ResponseBody<'static> {
    let assignments = request
        .assignments
        .iter()
        .map(|a| (a.member_id.to_string(), a.assignment.to_vec()))
        .collect();
    let pending = broker.groups().sync(
        &request.group_id,
        &request.member_id,
        request.generation_id,
        assignments,
    );
    let outcome = match pending {
        Pending::Ready(outcome) => outcome,
        Pending::Wait(receiver, _) => receiver.await.unwrap_or_default(),
    };
    ResponseBody::SyncGroup(SyncGroupResponse {
        error_code: outcome.error_code,
        protocol_type: Some(outcome.protocol_type.into()),
        protocol_name: outcome.protocol.map(Cow::Owned),
        assignment: outcome.assignment.into(),
        ..Default::default()
    })
}

/// Keeps the member alive, or tells it to rejoin.
pub fn heartbeat(broker: &Broker, request: &HeartbeatRequest<'_>) -> ResponseBody<'static> {
    let error_code =
        broker
            .groups()
            .heartbeat(&request.group_id, &request.member_id, request.generation_id);
    ResponseBody::Heartbeat(HeartbeatResponse {
        error_code,
        ..Default::default()
    })
}

/// One member (v0-2) or a batch of members (v3+) leaves.
pub fn leave_group(
    broker: &Broker,
    request: &LeaveGroupRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let mut groups = broker.groups();
    let mut leave = |member_id: &str| {
        let (code, timer) = groups.leave(&request.group_id, member_id);
        if let Some((group_id, rebalance)) = timer {
            schedule_rebalance_timeout(broker, group_id, rebalance, MAX_REBALANCE_WAIT);
        }
        code
    };
    let response = if version < 3 {
        LeaveGroupResponse {
            error_code: leave(&request.member_id),
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
                    error_code: leave(&m.member_id),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    };
    ResponseBody::LeaveGroup(response)
}

fn millis(ms: i32) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}
