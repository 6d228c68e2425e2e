//! KIP-848 over real sockets: the answers Kafka 4.4.0 gives to the same
//! ConsumerGroupHeartbeat frames (compared by hand): a heartbeat to a
//! group that does not exist is GROUP_ID_NOT_FOUND, a join gets an epoch,
//! the heartbeat interval and an assignment, a wrong epoch is
//! FENCED_MEMBER_EPOCH, a leave answers epoch -1 and no heartbeat
//! interval, and a second leave
//! UNKNOWN_MEMBER_ID.

use kafka_wire::messages::*;
use kafka_wire::{ErrorCode, RequestBody, ResponseBody};

mod common;

#[tokio::test]
async fn heartbeats_are_answered_as_kafka_answers_them() {
    let cluster = common::cluster(1, "t848", 3).await;
    let mut probe = common::connect(&cluster, 0).await;
    let member = "member-aaaaaaaaaaaaaaaa";
    let beat = |member: &'static str, epoch: i32| {
        RequestBody::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatRequest {
            group_id: "g848".into(),
            member_id: member.into(),
            member_epoch: epoch,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["t848".into()]),
            topic_partitions: Some(Vec::new().into()),
            ..Default::default()
        })
    };
    let mut answers = Vec::new();
    for (m, e) in [
        ("m-unknown-1234567890", 5),
        (member, 0),
        (member, 7),
        (member, -1),
        (member, -1),
    ] {
        match probe.request(beat(m, e), 1).await {
            Ok(ResponseBody::ConsumerGroupHeartbeat(r)) => answers.push((
                r.error_code,
                r.heartbeat_interval_ms,
                r.assignment.map(|a| {
                    a.topic_partitions
                        .iter()
                        .map(|t| t.partitions.len())
                        .sum::<usize>()
                }),
            )),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        answers,
        [
            (ErrorCode::GroupIdNotFound.code(), 0, None),
            (0, 5_000, Some(3)),
            (ErrorCode::FencedMemberEpoch.code(), 0, None),
            (0, 0, None),
            (ErrorCode::UnknownMemberId.code(), 0, None),
        ]
    );
}

/// The same for share groups (ShareGroupHeartbeat, then ShareFetch from a
/// member the leader does not check, and an unknown session), as Kafka
/// 4.4.0 answered them: errors carry member epoch 0.
#[tokio::test]
async fn share_heartbeats_and_sessions_are_answered_as_kafka_answers_them() {
    let cluster = common::cluster(1, "t932", 2).await;
    let mut probe = common::connect(&cluster, 0).await;
    let member = "member-aaaaaaaaaaaaaaaa";
    let beat = |member: &'static str, epoch: i32| {
        RequestBody::ShareGroupHeartbeat(ShareGroupHeartbeatRequest {
            group_id: "s932".into(),
            member_id: member.into(),
            member_epoch: epoch,
            subscribed_topic_names: Some(vec!["t932".into()]),
            ..Default::default()
        })
    };
    let mut answers = Vec::new();
    for (m, e) in [
        ("m-unknown-1234567890", 5),
        (member, 0),
        (member, 7),
        (member, -1),
        (member, -1),
        ("", 0),
    ] {
        match probe.request(beat(m, e), 1).await {
            Ok(ResponseBody::ShareGroupHeartbeat(r)) => answers.push((
                r.error_code,
                r.member_epoch == 0,
                r.heartbeat_interval_ms,
                r.assignment.is_some(),
            )),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        answers,
        [
            (ErrorCode::GroupIdNotFound.code(), true, 0, false),
            (0, false, 5_000, true),
            (ErrorCode::FencedMemberEpoch.code(), true, 0, false),
            (0, false, 0, false),
            (ErrorCode::UnknownMemberId.code(), true, 0, false),
            (ErrorCode::InvalidRequest.code(), true, 0, false),
        ]
    );
    let fetch = |epoch: i32| {
        RequestBody::ShareFetch(ShareFetchRequest {
            group_id: Some("s932".into()),
            member_id: Some("nobody-123456789012".into()),
            share_session_epoch: epoch,
            max_wait_ms: 10,
            max_bytes: 1000,
            max_records: 10,
            batch_size: 10,
            ..Default::default()
        })
    };
    let mut codes = Vec::new();
    for epoch in [0, 3] {
        match probe.request(fetch(epoch), 1).await {
            Ok(ResponseBody::ShareFetch(r)) => codes.push(r.error_code),
            other => panic!("{other:?}"),
        }
    }
    // A new session opens for anyone; a wrong epoch is refused.
    assert_eq!(codes, [0, ErrorCode::InvalidShareSessionEpoch.code()]);
}
