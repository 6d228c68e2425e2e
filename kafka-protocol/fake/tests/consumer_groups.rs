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

/// ConsumerGroupDescribe and ShareGroupDescribe at each broker of two: a
/// group is described at its coordinator only (NOT_COORDINATOR without a
/// message elsewhere), and a group of the other kind, or none, is
/// GROUP_ID_NOT_FOUND with a message naming the kind asked for.
#[tokio::test]
async fn describes_answer_at_the_coordinator_for_their_kind_of_group() {
    let cluster = common::cluster(2, "tdesc", 1).await;
    let mut probes = [
        common::connect(&cluster, 0).await,
        common::connect(&cluster, 1).await,
    ];
    let mut joined = Vec::new();
    for probe in &mut probes {
        let join = ConsumerGroupHeartbeatRequest {
            group_id: "gdesc".into(),
            member_id: "member-dddddddddddddddd".into(),
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec!["tdesc".into()]),
            topic_partitions: Some(Vec::new().into()),
            ..Default::default()
        };
        joined.push(common::call(probe, join, 1).await.error_code);
    }
    joined.sort_unstable();
    assert_eq!(joined, [0, ErrorCode::NotCoordinator.code()]);
    // Each group a describe answers: id, error code, message, members.
    macro_rules! described {
        ($probe:expr, $request:ident) => {{
            let request = $request {
                group_ids: vec!["gdesc".into(), "nope".into()],
                ..Default::default()
            };
            let answer = common::call($probe, request, 1).await;
            answer
                .groups
                .iter()
                .map(|g| {
                    let message = g.error_message.as_deref().map(str::to_owned);
                    (
                        g.group_id.to_string(),
                        g.error_code,
                        message,
                        g.members.len(),
                    )
                })
                .collect::<Vec<_>>()
        }};
    }
    let mut consumer = Vec::new();
    let mut share = Vec::new();
    for probe in &mut probes {
        consumer.extend(described!(probe, ConsumerGroupDescribeRequest));
        share.extend(described!(probe, ShareGroupDescribeRequest));
    }
    let (found, missing) = (0, ErrorCode::GroupIdNotFound.code());
    let elsewhere = |id: &str| (id.to_owned(), ErrorCode::NotCoordinator.code(), None, 0);
    // Kafka 4.4.0's words for a group no one has, and for a group of
    // another type.
    let not_found = |id: &str| {
        let message = format!("Group {id} not found.");
        (id.to_owned(), missing, Some(message), 0)
    };
    let not_share = |id: &str| {
        let message = format!("Group {id} is not a share group.");
        (id.to_owned(), missing, Some(message), 0)
    };
    for (answers, kind, gdesc) in [
        (consumer, "consumer", ("gdesc".to_owned(), found, None, 1)),
        (share, "share", not_share("gdesc")),
    ] {
        let mut answers = answers;
        answers.sort();
        let mut expected = vec![
            gdesc,
            elsewhere("gdesc"),
            not_found("nope"),
            elsewhere("nope"),
        ];
        expected.sort();
        assert_eq!(answers, expected, "{kind} groups");
    }
}
