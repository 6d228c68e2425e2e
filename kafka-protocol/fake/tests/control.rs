//! Faults on command (issue 44): request controls, the recorder, and
//! changes to a running cluster, over real sockets through `probe`.

use std::time::{Duration, Instant};

use kafka_wire::messages::*;
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};
use kafka_wire_fake::control::{FaultKind, FaultSpec, Intercept};
use kafka_wire_fake::probe::{Probe, ProbeError};
use kafka_wire_fake::state::topics::MAX_EPOCH_HISTORY;
use kafka_wire_fake::FakeCluster;
use tokio::net::TcpStream;

mod common;
use common::{batch, call, connect, from, metadata};

/// A Produce of one record to each of `partitions` of `topic`.
fn produce(topic: &str, partitions: &[i32]) -> RequestBody<'static> {
    let records = partitions.iter().map(|&p| (p, batch(None, &[b"v"])));
    common::produce(topic, records).into()
}

/// (partition, error, base offset, current leader) of every partition.
async fn produce_on(
    probe: &mut Probe,
    topic: &str,
    partitions: &[i32],
) -> Result<Vec<(i32, i16, i64, i32)>, ProbeError> {
    let records = partitions.iter().map(|&p| (p, batch(None, &[b"v"])));
    let r = common::try_call(probe, common::produce(topic, records), 10).await?;
    let answer = common::produced(r).into_iter();
    Ok(answer
        .map(|p| {
            (
                p.index,
                p.error_code,
                p.base_offset,
                p.current_leader.leader_id,
            )
        })
        .collect())
}

async fn cluster(partitions: i32) -> FakeCluster {
    common::cluster(3, "t", partitions).await
}

/// The error of a Fetch of t-0 with this current leader epoch.
async fn fetch_epoch(probe: &mut Probe, current_leader_epoch: i32) -> i16 {
    let partition = fetch_request::FetchPartition {
        current_leader_epoch,
        ..from(0, 0)
    };
    let r = call(probe, common::fetch("t", partition), 12).await;
    common::fetched(r).first().map_or(-2, |p| p.error_code)
}

async fn list_offsets_epoch(probe: &mut Probe, current_leader_epoch: i32) -> (i16, i32) {
    let request = ListOffsetsRequest {
        replica_id: -1,
        topics: vec![list_offsets_request::ListOffsetsTopic {
            name: "t".into(),
            partitions: vec![list_offsets_request::ListOffsetsPartition {
                partition_index: 0,
                current_leader_epoch,
                timestamp: -1,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let r = call(probe, request, 7).await;
    r.topics
        .iter()
        .flat_map(|t| t.into_owned().partitions.into_vec())
        .map(|p| (p.error_code, p.leader_epoch))
        .next()
        .unwrap_or((-2, -2))
}

/// (error, epoch, end offset) of OffsetForLeaderEpoch for t-0.
async fn epoch_end(probe: &mut Probe, current: i32, epoch: i32) -> (i16, i32, i64) {
    let request = OffsetForLeaderEpochRequest {
        replica_id: -1,
        topics: vec![offset_for_leader_epoch_request::OffsetForLeaderTopic {
            topic: "t".into(),
            partitions: vec![offset_for_leader_epoch_request::OffsetForLeaderPartition {
                partition: 0,
                current_leader_epoch: current,
                leader_epoch: epoch,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let r = call(probe, request, 4).await;
    r.topics
        .iter()
        .flat_map(|t| t.into_owned().partitions.into_vec())
        .map(|p| (p.error_code, p.leader_epoch, p.end_offset))
        .next()
        .unwrap_or((-2, -2, -2))
}

/// Metadata's (broker ids, leader and epoch of t-0).
async fn brokers_and_leader(probe: &mut Probe) -> (Vec<i32>, i32, i32) {
    let m = call(probe, metadata("t"), 12).await;
    let (leader, epoch) = m
        .topics
        .iter()
        .next()
        .and_then(|t| {
            t.partitions
                .iter()
                .next()
                .map(|p| (p.leader_id, p.leader_epoch))
        })
        .unwrap_or((-1, -1));
    (m.brokers.iter().map(|b| b.node_id).collect(), leader, epoch)
}

#[tokio::test]
async fn a_control_that_fires_twice_answers_the_third_request_normally() {
    let cluster = cluster(1).await;
    let (leader, _) = cluster.leader("t", 0).expect("t-0");
    let id = cluster
        .intercept(
            Intercept::api(ApiKey::Produce)
                .times(2)
                .error(ErrorCode::NotLeaderOrFollower),
        )
        .expect("installed");
    let mut probe = connect(&cluster, leader).await;
    let not_leader = ErrorCode::NotLeaderOrFollower.code();
    for _ in 0..2 {
        let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
        assert_eq!(answer[0].1, not_leader);
        assert_eq!(answer[0].2, -1);
    }
    let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
    assert_eq!(
        (answer[0].1, answer[0].2),
        (0, 0),
        "nothing was appended before"
    );
    assert_eq!(cluster.intercept_hits(id), Some(2));
    assert!(!cluster.remove_intercept(id), "spent controls are gone");
    assert_eq!(cluster.fault_counts().get(FaultKind::Error), 2);
}

#[tokio::test]
async fn drop_after_takes_effect_but_the_answer_is_lost() {
    let cluster = cluster(1).await;
    let (leader, _) = cluster.leader("t", 0).expect("t-0");
    cluster
        .intercept(Intercept::api(ApiKey::Produce).once().drop_after())
        .expect("installed");
    let mut probe = connect(&cluster, leader).await;
    match produce_on(&mut probe, "t", &[0]).await {
        Err(ProbeError::Closed | ProbeError::Connection(_)) => {}
        other => panic!("the connection should close: {other:?}"),
    }
    // The records of the dropped answer are counted (one record, one
    // batch); a partition the broker refused adds none.
    assert_eq!(cluster.fault_counts().dropped_answer_records, 1);
    let elsewhere = cluster.node_ids().into_iter().find(|n| *n != leader);
    let elsewhere = elsewhere.expect("another broker");
    cluster
        .intercept(Intercept::api(ApiKey::Produce).once().drop_after())
        .expect("installed");
    let mut other = connect(&cluster, elsewhere).await;
    match produce_on(&mut other, "t", &[0]).await {
        Err(ProbeError::Closed | ProbeError::Connection(_)) => {}
        other => panic!("the connection should close: {other:?}"),
    }
    let mut probe = connect(&cluster, leader).await;
    let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
    assert_eq!(
        (answer[0].1, answer[0].2),
        (0, 1),
        "the dropped one was appended"
    );
    assert_eq!(cluster.fault_counts().get(FaultKind::DropAfter), 2);
    assert_eq!(cluster.fault_counts().dropped_answer_records, 1);
}

#[tokio::test]
async fn drop_before_and_hang_and_delay() {
    let cluster = cluster(1).await;
    let (leader, _) = cluster.leader("t", 0).expect("t-0");
    cluster
        .intercept(Intercept::api(ApiKey::Metadata).once().drop_before())
        .expect("installed");
    let mut probe = connect(&cluster, leader).await;
    assert!(matches!(
        probe
            .request(RequestBody::Metadata(MetadataRequest::default()), 12)
            .await,
        Err(ProbeError::Closed | ProbeError::Connection(_))
    ));
    cluster
        .intercept(
            Intercept::api(ApiKey::Produce)
                .once()
                .delay(Duration::from_millis(300)),
        )
        .expect("installed");
    let mut probe = connect(&cluster, leader).await;
    let start = Instant::now();
    let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        (answer[0].1, answer[0].2),
        (0, 0),
        "drop-before did not append"
    );
    cluster
        .intercept(Intercept::api(ApiKey::Produce).once().hang())
        .expect("installed");
    let hung = tokio::time::timeout(
        Duration::from_millis(300),
        produce_on(&mut probe, "t", &[0]),
    )
    .await;
    assert!(hung.is_err(), "no answer");
    let counts = cluster.fault_counts();
    assert_eq!(
        (
            counts.get(FaultKind::DropBefore),
            counts.get(FaultKind::Delay),
            counts.get(FaultKind::Hang)
        ),
        (1, 1, 1)
    );
}

#[tokio::test]
async fn partition_errors_leave_the_other_partitions_handled() {
    let cluster = common::cluster(1, "t", 2).await;
    cluster
        .intercept(
            Intercept::api(ApiKey::Produce)
                .once()
                .partition_error(ErrorCode::KafkaStorageError, [("t".to_owned(), 1)]),
        )
        .expect("installed");
    let mut probe = connect(&cluster, 0).await;
    let mut answer = produce_on(&mut probe, "t", &[0, 1]).await.expect("answer");
    answer.sort();
    assert_eq!(answer[0].1, 0);
    assert_eq!(answer[1].1, ErrorCode::KafkaStorageError.code());
    let mut answer = produce_on(&mut probe, "t", &[0, 1]).await.expect("answer");
    answer.sort();
    assert_eq!(
        (answer[0].2, answer[1].2),
        (1, 0),
        "partition 1 was not appended to"
    );
}

/// The error codes anywhere in a response's JSON form.
fn codes(body: &ResponseBody<'_>, version: i16) -> Vec<i64> {
    fn walk(value: &kafka_wire::runtime::json::Value, out: &mut Vec<i64>) {
        use kafka_wire::runtime::json::Value;
        match value {
            Value::Object(map) => {
                for (key, field) in map.iter() {
                    if key == "errorCode" {
                        out.extend(field.as_i64());
                    } else {
                        walk(field, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&body.to_json(version), &mut out);
    out
}

#[tokio::test]
async fn error_answers_mirror_the_request() {
    let cluster = cluster(1).await;
    let code = ErrorCode::CoordinatorLoadInProgress;
    cluster
        .intercept(
            Intercept::any()
                .when(|b| b.api_key() != ApiKey::ApiVersions)
                .error(code),
        )
        .expect("installed");
    let mut probe = connect(&cluster, 0).await;
    let cases: Vec<(RequestBody<'static>, i16, usize)> = vec![
        (produce("t", &[0, 1]), 9, 2),
        (
            RequestBody::Fetch(FetchRequest {
                topics: vec![fetch_request::FetchTopic {
                    topic: "t".into(),
                    partitions: vec![fetch_request::FetchPartition::default(); 2].into(),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }),
            12,
            3,
        ),
        (
            RequestBody::Metadata(MetadataRequest {
                topics: Some(
                    vec![metadata_request::MetadataRequestTopic {
                        name: Some("t".into()),
                        ..Default::default()
                    }]
                    .into(),
                ),
                ..Default::default()
            }),
            13,
            2,
        ),
        (
            RequestBody::FindCoordinator(FindCoordinatorRequest {
                coordinator_keys: vec!["a".into(), "b".into()],
                ..Default::default()
            }),
            4,
            2,
        ),
        (
            RequestBody::JoinGroup(JoinGroupRequest {
                group_id: "g".into(),
                protocol_type: "consumer".into(),
                ..Default::default()
            }),
            9,
            1,
        ),
        (
            RequestBody::OffsetCommit(OffsetCommitRequest {
                group_id: "g".into(),
                topics: vec![offset_commit_request::OffsetCommitRequestTopic {
                    name: "t".into(),
                    partitions: vec![
                        offset_commit_request::OffsetCommitRequestPartition::default();
                        3
                    ]
                    .into(),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }),
            8,
            3,
        ),
    ];
    for (request, version, count) in cases {
        let api = request.api_key();
        let response = probe
            .request(request, version)
            .await
            .unwrap_or_else(|e| panic!("{api:?}: {e}"));
        let found = codes(&response, version);
        assert_eq!(found.len(), count, "{api:?}: {found:?}");
        assert!(
            found.iter().all(|c| *c == i64::from(code.code())),
            "{api:?}: {found:?}"
        );
    }
}

#[tokio::test]
async fn a_moved_leader_answers_not_leader_then_metadata_leads_to_success() {
    let cluster = cluster(1).await;
    let (old, epoch) = cluster.leader("t", 0).expect("t-0");
    assert_eq!(epoch, 0);
    let (new, epoch) = cluster.move_leader("t", 0, None).expect("moved");
    assert_ne!(new, old);
    assert_eq!(epoch, 1);
    let mut probe = connect(&cluster, old).await;
    let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
    assert_eq!(answer[0].1, ErrorCode::NotLeaderOrFollower.code());
    assert_eq!(answer[0].3, new, "KIP-951's current leader");
    let (_, leader, epoch) = brokers_and_leader(&mut probe).await;
    assert_eq!((leader, epoch), (new, 1));
    let mut probe = connect(&cluster, new).await;
    let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
    assert_eq!((answer[0].1, answer[0].2), (0, 0));
    assert_eq!(cluster.fault_counts().get(FaultKind::MoveLeaders), 1);
}

/// Found by the chaos runs: batches were stored with partition leader
/// epoch 0, so after a leader move librdkafka validated its position with
/// OffsetForLeaderEpoch(0), was told epoch 0 ended at offset 0, and read
/// the partition again from there. Each batch must carry the epoch of the
/// leader that appended it, and that epoch must end past it.
#[tokio::test]
async fn appended_batches_carry_the_leaders_epoch() {
    let cluster = cluster(1).await;
    let (leader, epoch) = cluster.move_leader("t", 0, None).expect("moved");
    assert_eq!(epoch, 1);
    let mut probe = connect(&cluster, leader).await;
    let answer = produce_on(&mut probe, "t", &[0]).await.expect("answer");
    assert_eq!((answer[0].1, answer[0].2), (0, 0));
    let request = RequestBody::Fetch(FetchRequest {
        replica_id: -1,
        max_bytes: 1 << 20,
        session_epoch: -1,
        topics: vec![fetch_request::FetchTopic {
            topic: "t".into(),
            partitions: vec![fetch_request::FetchPartition {
                partition: 0,
                current_leader_epoch: 1,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    });
    let records = match probe.request(request, 12).await {
        Ok(ResponseBody::Fetch(r)) => r
            .responses
            .iter()
            .flat_map(|t| t.into_owned().partitions.into_vec())
            .filter_map(|p| p.records.map(|r| r.to_vec()))
            .next()
            .expect("records"),
        other => panic!("{other:?}"),
    };
    let stamped = i32::from_be_bytes(records[12..16].try_into().expect("a batch"));
    assert_eq!(stamped, 1, "the batch's partition leader epoch");
    // Epoch 1 ends at the high watermark, past the batch: no truncation.
    cluster.move_leader("t", 0, None).expect("moved again");
    let (leader, _) = cluster.leader("t", 0).expect("t-0");
    let mut probe = connect(&cluster, leader).await;
    assert_eq!(epoch_end(&mut probe, 2, 1).await, (0, 1, 1));
}

#[tokio::test]
async fn stale_and_future_leader_epochs_are_refused() {
    let cluster = cluster(1).await;
    let (old, _) = cluster.leader("t", 0).expect("t-0");
    let mut probe = connect(&cluster, old).await;
    produce_on(&mut probe, "t", &[0]).await.expect("answer");
    produce_on(&mut probe, "t", &[0]).await.expect("answer");
    let (new, epoch) = cluster.move_leader("t", 0, None).expect("moved");
    let mut probe = connect(&cluster, new).await;
    produce_on(&mut probe, "t", &[0]).await.expect("answer");
    let fenced = ErrorCode::FencedLeaderEpoch.code();
    let unknown = ErrorCode::UnknownLeaderEpoch.code();
    assert_eq!(fetch_epoch(&mut probe, epoch - 1).await, fenced);
    assert_eq!(fetch_epoch(&mut probe, epoch + 1).await, unknown);
    assert_eq!(fetch_epoch(&mut probe, epoch).await, 0);
    assert_eq!(fetch_epoch(&mut probe, -1).await, 0);
    assert_eq!(list_offsets_epoch(&mut probe, epoch - 1).await.0, fenced);
    assert_eq!(list_offsets_epoch(&mut probe, epoch + 1).await.0, unknown);
    assert_eq!(list_offsets_epoch(&mut probe, epoch).await, (0, epoch));
    assert_eq!(epoch_end(&mut probe, epoch - 1, 0).await.0, fenced);
    assert_eq!(epoch_end(&mut probe, epoch + 1, 0).await.0, unknown);
    // Epoch 0 ended where epoch 1 began: after the first two records.
    assert_eq!(epoch_end(&mut probe, epoch, 0).await, (0, 0, 2));
    assert_eq!(epoch_end(&mut probe, epoch, epoch).await, (0, epoch, 3));
}

#[tokio::test]
async fn a_lookup_by_time_before_version_4_answers_without_a_leader_epoch() {
    // ListOffsets v1-3 carry no leader epoch: the record's batch epoch in
    // the answer made it fail to encode, and the fake closed the
    // connection (rskafka's get_offset by timestamp, at v3).
    let cluster = cluster(1).await;
    let (leader, _) = cluster.leader("t", 0).expect("t-0");
    let mut probe = connect(&cluster, leader).await;
    produce_on(&mut probe, "t", &[0]).await.expect("answer");
    for version in [1, 3, 4] {
        let request = ListOffsetsRequest {
            replica_id: -1,
            topics: vec![list_offsets_request::ListOffsetsTopic {
                name: "t".into(),
                partitions: vec![list_offsets_request::ListOffsetsPartition {
                    partition_index: 0,
                    timestamp: 0,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        };
        let r = call(&mut probe, request, version).await;
        let answer = r
            .topics
            .iter()
            .flat_map(|t| t.into_owned().partitions.into_vec())
            .map(|p| (p.error_code, p.offset, p.leader_epoch))
            .next();
        let epoch = if version >= 4 { 0 } else { -1 };
        assert_eq!(answer, Some((0, 0, epoch)), "v{version}");
    }
}

#[tokio::test]
async fn epochs_older_than_the_history_end_where_the_earliest_known_began() {
    // librdkafka checks its position with OffsetForLeaderEpoch after every
    // leader change; an epoch the fake no longer remembered was answered
    // (-1, -1), which librdkafka takes for a truncated log, and it reset
    // its consumers to the beginning (the chaos run's confluent-kafka,
    // after some 50 leader moves a partition).
    let cluster = cluster(1).await;
    let moves = i32::try_from(MAX_EPOCH_HISTORY).expect("small") + 10;
    let mut epoch = 0;
    let mut leader = cluster.leader("t", 0).expect("t-0").0;
    for _ in 0..moves {
        let mut probe = connect(&cluster, leader).await;
        produce_on(&mut probe, "t", &[0]).await.expect("answer");
        (leader, epoch) = cluster.move_leader("t", 0, None).expect("moved");
    }
    let mut probe = connect(&cluster, leader).await;
    // Epoch 3 held the fourth record; the history now starts later.
    let (error, answered_epoch, end) = epoch_end(&mut probe, epoch, 3).await;
    assert_eq!((error, answered_epoch), (0, 3));
    assert!(end >= 4, "epoch 3 ended at {end}, before its own record");
    // Epochs without records leave no entry: moves alone do not fill it.
    let before = epoch_end(&mut probe, epoch, epoch - 1).await;
    for _ in 0..3 {
        (leader, epoch) = cluster.move_leader("t", 0, None).expect("moved");
    }
    let mut probe = connect(&cluster, leader).await;
    assert_eq!(epoch_end(&mut probe, epoch, epoch - 4).await, before);
    assert_eq!(
        epoch_end(&mut probe, epoch, epoch - 1).await,
        (0, epoch - 4, i64::from(moves))
    );
}

#[tokio::test]
async fn a_stopped_broker_refuses_connections_and_restarts_with_its_data() {
    let cluster = cluster(1).await;
    let (leader, _) = cluster.leader("t", 0).expect("t-0");
    let address = cluster.broker_address(leader).expect("address");
    let mut probe = connect(&cluster, leader).await;
    produce_on(&mut probe, "t", &[0]).await.expect("answer");
    cluster.stop_broker(leader).await.expect("stopped");
    assert_eq!(cluster.broker_running(leader), Some(false));
    assert!(
        TcpStream::connect(&address).await.is_err(),
        "the port refuses"
    );
    assert!(
        produce_on(&mut probe, "t", &[0]).await.is_err(),
        "its connections were closed"
    );
    let (moved, epoch) = cluster.leader("t", 0).expect("t-0");
    assert_ne!(moved, leader);
    assert_eq!(epoch, 1);
    let mut other = connect(&cluster, moved).await;
    let (brokers, _, _) = brokers_and_leader(&mut other).await;
    assert!(!brokers.contains(&leader));
    assert_eq!(brokers.len(), 2);
    cluster.start_broker(leader).await.expect("started");
    let mut probe = connect(&cluster, leader).await;
    let (brokers, now, _) = brokers_and_leader(&mut probe).await;
    assert_eq!(brokers.len(), 3);
    assert_eq!(now, moved, "leadership stays where it moved");
    let answer = produce_on(&mut other, "t", &[0]).await.expect("answer");
    assert_eq!((answer[0].1, answer[0].2), (0, 1), "the data survived");
    assert_eq!(cluster.fault_counts().get(FaultKind::StopBroker), 1);
}

#[tokio::test]
async fn brokers_are_added_and_removed() {
    let cluster = cluster(3).await;
    let added = cluster.add_broker().await.expect("added");
    assert_eq!(added, 3);
    let mut probe = connect(&cluster, added).await;
    assert_eq!(brokers_and_leader(&mut probe).await.0, [0, 1, 2, 3]);
    cluster.remove_broker(1).await.expect("removed");
    assert_eq!(brokers_and_leader(&mut probe).await.0, [0, 2, 3]);
    assert_eq!(cluster.node_ids(), [0, 2, 3]);
    for p in 0..3 {
        assert_ne!(cluster.leader("t", p).map(|l| l.0), Some(1));
    }
}

#[tokio::test]
async fn a_moved_coordinator_answers_not_coordinator() {
    let cluster = cluster(1).await;
    let old = cluster.coordinator("g");
    let new = cluster.move_coordinator("g", None).expect("moved");
    assert_ne!(old, new);
    let heartbeat = || {
        RequestBody::Heartbeat(HeartbeatRequest {
            group_id: "g".into(),
            member_id: "m".into(),
            ..Default::default()
        })
    };
    let mut probe = connect(&cluster, old).await;
    match probe.request(heartbeat(), 4).await {
        Ok(ResponseBody::Heartbeat(r)) => {
            assert_eq!(r.error_code, ErrorCode::NotCoordinator.code())
        }
        other => panic!("{other:?}"),
    }
    let find = RequestBody::FindCoordinator(FindCoordinatorRequest {
        key: "g".into(),
        ..Default::default()
    });
    match probe.request(find, 3).await {
        Ok(ResponseBody::FindCoordinator(r)) => assert_eq!(r.node_id, new),
        other => panic!("{other:?}"),
    }
    let mut probe = connect(&cluster, new).await;
    match probe.request(heartbeat(), 4).await {
        Ok(ResponseBody::Heartbeat(r)) => {
            assert_ne!(r.error_code, ErrorCode::NotCoordinator.code())
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_recorder_is_bounded_and_rtt_and_caps_apply() {
    let cluster = cluster(1).await;
    assert!(cluster.recorded().is_empty(), "off by default");
    cluster.record_requests(3);
    cluster.set_rtt(0, Duration::from_millis(100));
    let mut probe = connect(&cluster, 0).await;
    let start = Instant::now();
    for _ in 0..5 {
        brokers_and_leader(&mut probe).await;
    }
    assert!(start.elapsed() >= Duration::from_millis(500));
    let recorded = cluster.recorded();
    assert_eq!(recorded.len(), 3);
    assert!(recorded
        .iter()
        .all(|r| r.api == ApiKey::Metadata && r.version == 12 && r.broker == 0));
    cluster.set_rtt(0, Duration::ZERO);
    cluster.cap_version(ApiKey::Metadata, Some(9));
    assert!(
        probe
            .request(RequestBody::Metadata(MetadataRequest::default()), 12)
            .await
            .is_err(),
        "a version past the cap closes the connection"
    );
}

#[tokio::test]
async fn a_rate_draws_from_the_seed() {
    let run = |seed| async move {
        let cluster = cluster(1).await;
        cluster.seed(seed);
        cluster
            .intercept(
                Intercept::api(ApiKey::Metadata)
                    .rate(0.5)
                    .error(ErrorCode::NetworkException),
            )
            .expect("installed");
        let mut probe = connect(&cluster, 0).await;
        let mut pattern = Vec::new();
        for _ in 0..16 {
            let (brokers, _, _) = brokers_and_leader(&mut probe).await;
            pattern.push(brokers.is_empty());
        }
        pattern
    };
    let first = run(7).await;
    assert_eq!(first, run(7).await);
    assert!(first.contains(&true) && first.contains(&false), "{first:?}");
}

#[tokio::test]
async fn a_cluster_fault_with_times_fires_that_many_times() {
    let cluster = cluster(1).await;
    let spec = FaultSpec::parse("every=50ms:move-coordinator:times=2").expect("parses");
    cluster.apply_fault(&spec).expect("applied");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(cluster.fault_counts().get(FaultKind::MoveCoordinator), 2);
}

#[tokio::test]
async fn control_lines_and_fault_specs_apply() {
    let cluster = cluster(1).await;
    let answer = cluster
        .control_line(
            r#"{"id": 1, "cmd": "fault", "spec": "metadata:error=NOT_CONTROLLER:times=1"}"#,
        )
        .await;
    assert!(
        answer.contains(r#""ok":true"#) && answer.contains(r#""id":1"#),
        "{answer}"
    );
    let mut probe = connect(&cluster, 0).await;
    assert!(
        brokers_and_leader(&mut probe).await.0.is_empty(),
        "the fault fired"
    );
    assert_eq!(brokers_and_leader(&mut probe).await.0.len(), 3);
    let answer = cluster
        .control_line(r#"{"id": "m", "cmd": "move-leader", "topic": "t", "partition": 0}"#)
        .await;
    assert!(answer.contains(r#""leader_epoch":1"#), "{answer}");
    let answer = cluster
        .control_line(r#"{"id": 3, "cmd": "stop-broker", "broker": 9}"#)
        .await;
    assert_eq!(answer, r#"{"id":3,"error":"no broker has node id 9"}"#);
    let answer = cluster.control_line(r#"{"id": 4, "cmd": "counts"}"#).await;
    assert!(
        answer.contains(r#""error":1"#) && answer.contains(r#""move-leaders":1"#),
        "{answer}"
    );
    assert_eq!(
        cluster.fault_counts().to_string(),
        "faults error=1,delay=0,hang=0,drop-before=0,drop-after=0,move-leaders=1,move-coordinator=0,stop-broker=0,restart-broker=0,drop-after-records=0"
    );
}
