//! The fake over real sockets, with raw frames (kafka_wire::frame's
//! FrameCodec through `probe`): routing, idempotence, long polls, offsets,
//! groups, and each limit.

use std::time::{Duration, Instant};

use kafka_wire::frame::ResponseFrame;
use kafka_wire::messages::*;
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};
use kafka_wire_fake::probe::{Probe, ProbeError};
use kafka_wire_fake::{FakeCluster, TopicSpec};
use kafka_wire_test_support::wire::librdkafka_metadata_with_trailing_bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;
use common::{batch, call, from, metadata};

/// (error code, base offset, current leader id, node endpoints) of the one
/// partition.
async fn produce_on(
    probe: &mut Probe,
    topic: &str,
    partition: i32,
    records: Vec<u8>,
    version: i16,
) -> (i16, i64, i32, usize) {
    let r = call(
        probe,
        common::produce(topic, [(partition, records)]),
        version,
    )
    .await;
    let endpoints = r.node_endpoints.len();
    let p = common::produced(r).into_iter().next().unwrap_or_default();
    (
        p.error_code,
        p.base_offset,
        p.current_leader.leader_id,
        endpoints,
    )
}

fn fetch(
    topic: &str,
    partition: i32,
    offset: i64,
    max_wait_ms: i32,
    min_bytes: i32,
    max_bytes: i32,
) -> FetchRequest<'static> {
    let partition = fetch_request::FetchPartition {
        partition_max_bytes: max_bytes,
        ..from(partition, offset)
    };
    FetchRequest {
        max_wait_ms,
        min_bytes,
        max_bytes,
        ..common::fetch(topic, partition)
    }
}

/// (error, high watermark, log start, record bytes, current leader).
async fn fetch_on(
    probe: &mut Probe,
    request: FetchRequest<'static>,
) -> (i16, i64, i64, usize, i32) {
    let r = call(probe, request, 12).await;
    let p = common::fetched(r).into_iter().next().unwrap_or_default();
    (
        p.error_code,
        p.high_watermark,
        p.log_start_offset,
        p.records.map_or(0, |r| r.len()),
        p.current_leader.leader_id,
    )
}

/// The address of `node` in the cluster.
fn address(cluster: &FakeCluster, node: i32) -> String {
    cluster.broker_address(node).expect("a broker")
}

/// The leader of partition 0 of `topic`, from Metadata.
async fn leader(cluster: &FakeCluster, topic: &str) -> i32 {
    let mut probe = common::connect(cluster, 0).await;
    let m = call(&mut probe, metadata(topic), 12).await;
    m.topics
        .iter()
        .next()
        .and_then(|t| t.partitions.iter().next().map(|p| p.leader_id))
        .unwrap_or(-1)
}

async fn three() -> FakeCluster {
    common::cluster(3, "t", 1).await
}

#[tokio::test]
async fn a_partition_led_elsewhere_names_its_leader() {
    let cluster = three().await;
    let leader = leader(&cluster, "t").await;
    let other = (leader + 1) % 3;
    let mut probe = common::connect(&cluster, other).await;
    let (code, _, current, endpoints) =
        produce_on(&mut probe, "t", 0, batch(None, &[b"x"]), 10).await;
    assert_eq!(code, ErrorCode::NotLeaderOrFollower.code());
    assert_eq!((current, endpoints), (leader, 1));
    let (code, .., current) = fetch_on(&mut probe, fetch("t", 0, 0, 0, 1, 1 << 20)).await;
    assert_eq!(
        (code, current),
        (ErrorCode::NotLeaderOrFollower.code(), leader)
    );
    let mut probe = common::connect(&cluster, leader).await;
    let (code, offset, ..) = produce_on(&mut probe, "t", 0, batch(None, &[b"x"]), 10).await;
    assert_eq!((code, offset), (0, 0));
}

#[tokio::test]
async fn idempotence_errors_and_duplicates() {
    let cluster = three().await;
    let mut probe = common::connect(&cluster, leader(&cluster, "t").await).await;
    let (code, offset, ..) =
        produce_on(&mut probe, "t", 0, batch(Some((7, 0, 0)), &[b"a", b"b"]), 9).await;
    assert_eq!((code, offset), (0, 0));
    // The same batch again: answered with its first offset, not appended.
    let (code, offset, ..) =
        produce_on(&mut probe, "t", 0, batch(Some((7, 0, 0)), &[b"a", b"b"]), 9).await;
    assert_eq!((code, offset), (0, 0));
    let (code, ..) = produce_on(&mut probe, "t", 0, batch(Some((7, 0, 5)), &[b"c"]), 9).await;
    assert_eq!(code, ErrorCode::OutOfOrderSequenceNumber.code());
    let (code, offset, ..) =
        produce_on(&mut probe, "t", 0, batch(Some((7, 0, 2)), &[b"c"]), 9).await;
    assert_eq!((code, offset), (0, 2));
    let (code, ..) = produce_on(&mut probe, "t", 0, batch(Some((7, 1, 3)), &[b"d"]), 9).await;
    assert_eq!(code, ErrorCode::OutOfOrderSequenceNumber.code());
    let (code, ..) = produce_on(&mut probe, "t", 0, batch(Some((7, 1, 0)), &[b"d"]), 9).await;
    assert_eq!(code, 0);
    let (code, ..) = produce_on(&mut probe, "t", 0, batch(Some((7, 0, 3)), &[b"e"]), 9).await;
    assert_eq!(code, ErrorCode::InvalidProducerEpoch.code());
}

/// KAFKA-15591, as a pipelining idempotent producer meets it: its first
/// batch (sequences 0-34) fails with a retriable error and its second
/// (35-39) is handled first. Kafka 4.4.0, and the fake by default, append
/// the second from a producer they have no state for, and the first's
/// every retry is then out of order. Under Kafka 4.5's rule the second is
/// refused until the first is in, and both go in, in order.
#[tokio::test]
async fn a_first_batch_overtaken_by_the_second() {
    let first = || batch(Some((7, 0, 0)), &[b"a".as_slice(); 35]);
    let second = || batch(Some((7, 0, 35)), &[b"b".as_slice(); 5]);
    let out_of_order = ErrorCode::OutOfOrderSequenceNumber.code();
    for from_zero in [false, true] {
        let cluster = FakeCluster::builder()
            .brokers(1)
            .topic(TopicSpec::new("t", 1))
            .first_sequence_from_zero(from_zero)
            .start()
            .await
            .expect("start");
        let mut probe = common::connect(&cluster, 0).await;
        let (code, ..) = produce_on(&mut probe, "t", 0, second(), 11).await;
        if from_zero {
            assert_eq!(code, out_of_order);
            let (code, offset, ..) = produce_on(&mut probe, "t", 0, first(), 11).await;
            assert_eq!((code, offset), (0, 0));
            let (code, offset, ..) = produce_on(&mut probe, "t", 0, second(), 11).await;
            assert_eq!((code, offset), (0, 35));
        } else {
            assert_eq!(code, 0);
            for _ in 0..3 {
                let (code, ..) = produce_on(&mut probe, "t", 0, first(), 11).await;
                assert_eq!(code, out_of_order);
            }
        }
        // A partition that holds records takes any first sequence from a
        // new producer under either rule.
        let (code, ..) = produce_on(&mut probe, "t", 0, batch(Some((8, 0, 9)), &[b"c"]), 11).await;
        assert_eq!(code, 0);
    }
}

/// Kafka 4.4.0 refuses an LZ4 batch whose frame links its blocks
/// (kafkajs's lz4js writes such frames): UNKNOWN_SERVER_ERROR, from its
/// reader's "Dependent block stream is unsupported". The fake accepted it.
#[tokio::test]
async fn an_lz4_frame_of_dependent_blocks_is_refused_as_kafka_refuses_it() {
    use kafka_wire_records::{Compression, RecordBatchBuilder};
    let mut builder = RecordBatchBuilder::new(0).compression(Compression::Lz4);
    assert!(builder.append(1_000, None, Some(b"v"), &[]).is_ok());
    let independent = builder.build().unwrap_or_default();
    // The same batch with its records section in a frame of linked blocks.
    let info = lz4_flex::frame::FrameInfo::new().block_mode(lz4_flex::frame::BlockMode::Linked);
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    let records = kafka_wire_records::RecordBatch::decode(
        &independent,
        &kafka_wire_records::DecodeOptions::default(),
    )
    .map(|(batch, _)| batch.records_section().to_vec())
    .unwrap_or_default();
    assert!(std::io::Write::write_all(&mut encoder, &records).is_ok());
    let mut linked = independent[..61].to_vec();
    linked.extend(encoder.finish().unwrap_or_default());
    let length = i32::try_from(linked.len() - 12).unwrap_or_default();
    linked[8..12].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&linked[21..]);
    linked[17..21].copy_from_slice(&crc.to_be_bytes());

    let cluster = common::cluster(1, "t", 1).await;
    let mut probe = common::connect(&cluster, 0).await;
    let (code, ..) = produce_on(&mut probe, "t", 0, linked, 11).await;
    assert_eq!(code, ErrorCode::UnknownServerError.code());
    let (code, offset, ..) = produce_on(&mut probe, "t", 0, independent, 11).await;
    assert_eq!((code, offset), (0, 0));
}

#[tokio::test]
async fn a_fetch_waits_for_records_and_out_of_range_is_an_error() {
    let cluster = three().await;
    let node = leader(&cluster, "t").await;
    let mut consumer = common::connect(&cluster, node).await;
    // Nothing to read: the fetch waits max_wait_ms.
    let started = Instant::now();
    let (code, hw, ..) = fetch_on(&mut consumer, fetch("t", 0, 0, 300, 1, 1 << 20)).await;
    assert_eq!((code, hw), (0, 0));
    assert!(started.elapsed() >= Duration::from_millis(250));
    // An append wakes a waiting fetch well before its max wait.
    let bootstrap = cluster.bootstrap();
    let producer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        kafka_wire_fake::probe::produce_one(&bootstrap, "t", b"late").await
    });
    let started = Instant::now();
    let (code, hw, _, bytes, _) =
        fetch_on(&mut consumer, fetch("t", 0, 0, 10_000, 1, 1 << 20)).await;
    assert_eq!((code, hw), (0, 1));
    assert!(bytes > 0);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(producer.await, Ok(Ok(0))));
    let (code, ..) = fetch_on(&mut consumer, fetch("t", 0, 5, 0, 1, 1 << 20)).await;
    assert_eq!(code, ErrorCode::OffsetOutOfRange.code());
}

#[tokio::test]
async fn fetch_size_limits_apply_before_copying() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .topic(TopicSpec::new("t", 1))
        .start()
        .await
        .expect("start");
    let mut probe = common::connect(&cluster, 0).await;
    let value = vec![7u8; 1000];
    for _ in 0..3 {
        let (code, ..) = produce_on(&mut probe, "t", 0, batch(None, &[&value]), 9).await;
        assert_eq!(code, 0);
    }
    let (_, _, _, all, _) = fetch_on(&mut probe, fetch("t", 0, 0, 0, 1, 1 << 20)).await;
    let (_, _, _, limited, _) = fetch_on(&mut probe, fetch("t", 0, 0, 0, 1, 1500)).await;
    let (_, _, _, tiny, _) = fetch_on(&mut probe, fetch("t", 0, 0, 0, 1, 10)).await;
    assert!(all > 3000, "{all}");
    assert_eq!(limited * 3, all, "one batch fits in 1500 bytes");
    assert_eq!(tiny, limited, "at least one batch, however small the limit");
}

#[tokio::test]
async fn the_byte_budget_drops_the_oldest_batches() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .max_bytes(5_000)
        .topic(TopicSpec::new("t", 1))
        .start()
        .await
        .expect("start");
    let mut probe = common::connect(&cluster, 0).await;
    let value = vec![1u8; 1000];
    for _ in 0..10 {
        let (code, ..) = produce_on(&mut probe, "t", 0, batch(None, &[&value]), 9).await;
        assert_eq!(code, 0);
    }
    let (code, hw, log_start, bytes, _) =
        fetch_on(&mut probe, fetch("t", 0, 9, 0, 1, 1 << 20)).await;
    assert_eq!((code, hw), (0, 10));
    assert!(log_start >= 5, "log start {log_start}");
    assert!(bytes > 0);
    let (code, ..) = fetch_on(&mut probe, fetch("t", 0, 0, 0, 1, 1 << 20)).await;
    assert_eq!(code, ErrorCode::OffsetOutOfRange.code());
}

#[tokio::test]
async fn a_group_joins_syncs_heartbeats_and_leaves() {
    let cluster = three().await;
    let mut probe = common::connect(&cluster, 0).await;
    let coordinator = match probe
        .request(
            RequestBody::FindCoordinator(FindCoordinatorRequest {
                coordinator_keys: vec!["g".into()],
                ..Default::default()
            }),
            4,
        )
        .await
    {
        Ok(ResponseBody::FindCoordinator(r)) => r
            .coordinators
            .iter()
            .next()
            .map(|c| c.node_id)
            .unwrap_or(-1),
        other => panic!("{other:?}"),
    };
    let mut probe = common::connect(&cluster, coordinator).await;
    let join = |member_id: String| {
        RequestBody::JoinGroup(JoinGroupRequest {
            group_id: "g".into(),
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: 10_000,
            member_id: member_id.into(),
            protocol_type: "consumer".into(),
            protocols: vec![join_group_request::JoinGroupRequestProtocol {
                name: "range".into(),
                metadata: vec![1].into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        })
    };
    let Ok(ResponseBody::JoinGroup(first)) = probe.request(join(String::new()), 9).await else {
        panic!()
    };
    assert_eq!(first.error_code, ErrorCode::MemberIdRequired.code());
    let member = first.member_id.to_string();
    let Ok(ResponseBody::JoinGroup(joined)) = probe.request(join(member.clone()), 9).await else {
        panic!()
    };
    assert_eq!(
        (
            joined.error_code,
            joined.generation_id,
            joined.leader.as_ref()
        ),
        (0, 1, member.as_str())
    );
    // From v5 a SyncGroup must name the protocol type and name.
    let sync = RequestBody::SyncGroup(SyncGroupRequest {
        group_id: "g".into(),
        generation_id: 1,
        member_id: member.clone().into(),
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignments: vec![sync_group_request::SyncGroupRequestAssignment {
            member_id: member.clone().into(),
            assignment: vec![9].into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    });
    let Ok(ResponseBody::SyncGroup(synced)) = probe.request(sync, 5).await else {
        panic!()
    };
    assert_eq!(
        (synced.error_code, synced.assignment.as_ref()),
        (0, &[9u8][..])
    );
    let heartbeat = |generation| {
        RequestBody::Heartbeat(HeartbeatRequest {
            group_id: "g".into(),
            generation_id: generation,
            member_id: member.clone().into(),
            ..Default::default()
        })
    };
    let Ok(ResponseBody::Heartbeat(beat)) = probe.request(heartbeat(1), 4).await else {
        panic!()
    };
    assert_eq!(beat.error_code, 0);
    let Ok(ResponseBody::Heartbeat(beat)) = probe.request(heartbeat(0), 4).await else {
        panic!()
    };
    assert_eq!(beat.error_code, ErrorCode::IllegalGeneration.code());
    let leave = RequestBody::LeaveGroup(LeaveGroupRequest {
        group_id: "g".into(),
        members: vec![leave_group_request::MemberIdentity {
            member_id: member.clone().into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    });
    let Ok(ResponseBody::LeaveGroup(left)) = probe.request(leave, 5).await else {
        panic!()
    };
    assert_eq!(left.members.iter().next().map(|m| m.error_code), Some(0));
    let Ok(ResponseBody::Heartbeat(beat)) = probe.request(heartbeat(1), 4).await else {
        panic!()
    };
    assert_eq!(beat.error_code, ErrorCode::UnknownMemberId.code());
    // The other brokers do not coordinate the group.
    let other = (coordinator + 1) % 3;
    let mut elsewhere = common::connect(&cluster, other).await;
    let Ok(ResponseBody::Heartbeat(beat)) = elsewhere.request(heartbeat(1), 4).await else {
        panic!()
    };
    assert_eq!(beat.error_code, ErrorCode::NotCoordinator.code());
}

/// Whether the broker closed the connection (reads end) within a while.
async fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

/// Found by the chaos runs: librdkafka 2.16's admin client asks for every
/// topic with a Metadata v13 request that has three bytes after its body.
/// Kafka ignores them and answers; so must the fake.
#[tokio::test]
async fn bytes_after_a_request_body_are_ignored_as_kafka_does() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .start()
        .await
        .expect("start");
    let mut stream = TcpStream::connect(address(&cluster, 0))
        .await
        .expect("connect");
    // The frame librdkafka sent (correlation id 4).
    let frame = librdkafka_metadata_with_trailing_bytes();
    let mut sized = u32::try_from(frame.len())
        .expect("small")
        .to_be_bytes()
        .to_vec();
    sized.extend_from_slice(&frame);
    stream.write_all(&sized).await.expect("write");
    let mut size = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut size))
        .await
        .expect("an answer in time")
        .expect("an answer, not a closed connection");
    let mut response = vec![0u8; u32::from_be_bytes(size) as usize];
    stream.read_exact(&mut response).await.expect("the answer");
    let Ok(decoded) = ResponseFrame::decode(&response, ApiKey::Metadata, 13) else {
        panic!("not a Metadata v13 answer: {response:02x?}")
    };
    assert_eq!(decoded.header.correlation_id, 4);
    let ResponseBody::Metadata(metadata) = decoded.body else {
        panic!("{:?}", decoded.body)
    };
    assert_eq!(metadata.brokers.len(), 1);
}

#[tokio::test]
async fn connections_past_the_limit_are_closed() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .max_connections(2)
        .start()
        .await
        .expect("start");
    let addr = address(&cluster, 0);
    let mut first = Probe::connect(&addr).await.expect("connect");
    let mut second = Probe::connect(&addr).await.expect("connect");
    let api_versions = || RequestBody::ApiVersions(ApiVersionsRequest::default());
    assert!(first.request(api_versions(), 0).await.is_ok());
    assert!(second.request(api_versions(), 0).await.is_ok());
    let mut third = TcpStream::connect(&addr).await.expect("connect");
    assert!(closed(&mut third).await);
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fourth = Probe::connect(&addr).await.expect("connect");
    assert!(fourth.request(api_versions(), 0).await.is_ok());
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .idle_timeout(Duration::from_millis(300))
        .start()
        .await
        .expect("start");
    let mut stream = TcpStream::connect(address(&cluster, 0))
        .await
        .expect("connect");
    // Half a frame, then silence.
    stream.write_all(&[0, 0, 0, 20, 0]).await.expect("write");
    let started = Instant::now();
    assert!(closed(&mut stream).await);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_request_past_the_size_limit_closes_the_connection() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .max_request_size(1024)
        .start()
        .await
        .expect("start");
    let mut stream = TcpStream::connect(address(&cluster, 0))
        .await
        .expect("connect");
    // Only the size prefix: nothing is buffered for the claimed body.
    stream
        .write_all(&2048i32.to_be_bytes())
        .await
        .expect("write");
    assert!(closed(&mut stream).await);
}

#[tokio::test]
async fn create_topics_is_bounded() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .start()
        .await
        .expect("start");
    let mut probe = common::connect(&cluster, 0).await;
    let create = |name: &str, partitions| {
        RequestBody::CreateTopics(CreateTopicsRequest {
            topics: vec![create_topics_request::CreatableTopic {
                name: name.to_owned().into(),
                num_partitions: partitions,
                replication_factor: 1,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        })
    };
    let code = |r: Result<ResponseBody<'static>, ProbeError>| match r {
        Ok(ResponseBody::CreateTopics(r)) => r.topics.iter().next().map_or(-1, |t| t.error_code),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        code(probe.request(create("huge", i32::MAX), 7).await),
        ErrorCode::InvalidPartitions.code()
    );
    assert_eq!(code(probe.request(create("ok", 3), 7).await), 0);
    assert_eq!(
        code(probe.request(create("ok", 3), 7).await),
        ErrorCode::TopicAlreadyExists.code()
    );
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let cluster = FakeCluster::builder()
        .brokers(1)
        .start()
        .await
        .expect("start");
    let mut probe = common::connect(&cluster, 0).await;
    let mut sent = Vec::new();
    for _ in 0..5 {
        sent.push(
            probe
                .send(RequestBody::ApiVersions(ApiVersionsRequest::default()), 0)
                .await
                .expect("send"),
        );
    }
    for id in sent {
        let (correlation, _) = probe
            .receive(ApiKey::ApiVersions, 0)
            .await
            .expect("receive");
        assert_eq!(correlation, id);
    }
}

/// Brokers with chosen node ids, advertised elsewhere than they listen
/// (as behind a proxy), and racks: every answer that names a broker gives
/// its advertised address and rack, while the bootstrap list gives where
/// they listen.
#[tokio::test]
async fn brokers_are_told_at_their_advertised_addresses() {
    let cluster = FakeCluster::builder()
        .brokers(3)
        .node_ids([1, 5, 9])
        .advertise(1, "proxy.example", 29091)
        .advertise(5, "::1", 29095)
        .rack(9, "rack-c")
        .topic(TopicSpec::new("t", 6))
        .start()
        .await
        .expect("start");
    assert_eq!(cluster.node_ids(), [1, 5, 9]);
    let listening: Vec<String> = cluster.bootstrap().split(',').map(str::to_owned).collect();
    assert_eq!(listening.len(), 3);
    assert!(listening.iter().all(|a| a.starts_with("127.0.0.1:")));
    let nine = address(&cluster, 9);
    assert_eq!(
        cluster.advertised(),
        format!("proxy.example:29091,[::1]:29095,{nine}")
    );
    let told = |node: i32| -> (String, i32, Option<String>) {
        match node {
            1 => ("proxy.example".into(), 29091, None),
            5 => ("::1".into(), 29095, None),
            _ => (
                "127.0.0.1".into(),
                nine.rsplit(':')
                    .next()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0),
                Some("rack-c".into()),
            ),
        }
    };

    let mut probe = common::connect(&cluster, 9).await;
    let m = call(&mut probe, metadata("t"), 12).await;
    let brokers: Vec<_> = m
        .brokers
        .iter()
        .map(|b| {
            (
                b.node_id,
                (
                    b.host.to_string(),
                    b.port,
                    b.rack.as_deref().map(str::to_owned),
                ),
            )
        })
        .collect();
    assert_eq!(
        brokers,
        [1, 5, 9].map(|n| (n, told(n))).to_vec(),
        "Metadata's brokers"
    );
    let partitions: Vec<(i32, i32)> = m
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (p.partition_index, p.leader_id))
                .collect::<Vec<_>>()
        })
        .collect();
    let leaders: std::collections::BTreeSet<i32> = partitions.iter().map(|(_, l)| *l).collect();
    assert!(leaders.iter().all(|l| [1, 5, 9].contains(l)), "{leaders:?}");
    assert!(m.controller_id == 1 || m.controller_id == 5 || m.controller_id == 9);

    for key in ["group-a", "group-b", "group-c", "group-d"] {
        let found = call(
            &mut probe,
            FindCoordinatorRequest {
                key: key.to_owned().into(),
                ..Default::default()
            },
            3,
        )
        .await;
        assert_eq!(found.error_code, 0);
        let (host, port, _) = told(found.node_id);
        assert_eq!((found.host.to_string(), found.port), (host, port), "{key}");
    }

    let described = call(&mut probe, DescribeClusterRequest::default(), 1).await;
    let brokers: Vec<_> = described
        .brokers
        .iter()
        .map(|b| {
            (
                b.broker_id,
                (
                    b.host.to_string(),
                    b.port,
                    b.rack.as_deref().map(str::to_owned),
                ),
            )
        })
        .collect();
    assert_eq!(brokers, [1, 5, 9].map(|n| (n, told(n))).to_vec());

    // A Produce to a broker that does not lead the partition names the
    // leader's advertised endpoint (KIP-951).
    let leader = partitions
        .iter()
        .find(|(index, _)| *index == 0)
        .map_or(-1, |(_, leader)| *leader);
    let other = [1, 5, 9].into_iter().find(|n| *n != leader).unwrap_or(1);
    let mut probe = common::connect(&cluster, other).await;
    let r = call(
        &mut probe,
        common::produce("t", [(0, batch(None, &[b"x"]))]),
        10,
    )
    .await;
    let endpoints: Vec<_> = r
        .node_endpoints
        .iter()
        .map(|e| {
            (
                e.node_id,
                (
                    e.host.to_string(),
                    e.port,
                    e.rack.as_deref().map(str::to_owned),
                ),
            )
        })
        .collect();
    assert_eq!(endpoints, vec![(leader, told(leader))]);

    // A broker's configs: where it listens, where it is advertised, its
    // rack, as Kafka's static broker configs give them.
    let asked = |node: i32| DescribeConfigsRequest {
        resources: vec![describe_configs_request::DescribeConfigsResource {
            resource_type: 4,
            resource_name: node.to_string().into(),
            configuration_keys: Some(vec![
                "listeners".into(),
                "advertised.listeners".into(),
                "broker.rack".into(),
            ]),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    for (node, listens, advertised, rack) in [
        (
            1,
            address(&cluster, 1),
            "proxy.example:29091".to_owned(),
            None,
        ),
        (9, nine.clone(), nine.clone(), Some("rack-c")),
    ] {
        // A broker's configs are asked of that broker, as clients do.
        let mut probe = common::connect(&cluster, node).await;
        let described = call(&mut probe, asked(node), 4).await;
        let configs: std::collections::BTreeMap<String, Option<String>> = described
            .results
            .iter()
            .flat_map(|r| {
                r.configs
                    .iter()
                    .map(|c| (c.name.to_string(), c.value.as_deref().map(str::to_owned)))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            configs.get("listeners"),
            Some(&Some(format!("PLAINTEXT://{listens}"))),
            "{node}"
        );
        assert_eq!(
            configs.get("advertised.listeners"),
            Some(&Some(format!("PLAINTEXT://{advertised}"))),
            "{node}"
        );
        assert_eq!(
            configs.get("broker.rack"),
            Some(&rack.map(str::to_owned)),
            "{node}"
        );
    }
}

#[tokio::test]
async fn node_ids_and_advertised_addresses_are_checked() {
    let refused = |builder: kafka_wire_fake::FakeClusterBuilder| async move {
        builder.start().await.err().map(|e| e.to_string())
    };
    let base = || FakeCluster::builder().brokers(2);
    assert!(
        refused(base().node_ids([1])).await.is_some(),
        "one id for two brokers"
    );
    assert!(
        refused(base().node_ids([3, 3])).await.is_some(),
        "the same id twice"
    );
    assert!(
        refused(base().node_ids([-1, 2])).await.is_some(),
        "a negative id"
    );
    assert!(
        refused(base().advertise(7, "h", 1)).await.is_some(),
        "an unknown node"
    );
    assert!(
        refused(base().advertise(0, "", 1)).await.is_some(),
        "no host"
    );
    assert!(
        refused(base().advertise(0, "h", 0)).await.is_some(),
        "port 0"
    );
    assert!(
        refused(base().rack(4, "r")).await.is_some(),
        "a rack of an unknown node"
    );
}

#[tokio::test]
async fn the_probe_produces_to_a_topic_it_has_auto_created() {
    // The first Metadata creates the topic and answers
    // UNKNOWN_TOPIC_OR_PARTITION, as Kafka does; the probe asks again.
    let cluster = three().await;
    let produced = kafka_wire_fake::probe::produce_one(&cluster.bootstrap(), "fresh", b"v").await;
    assert!(matches!(produced, Ok(0)), "{produced:?}");
}

/// DescribeConfigs describes every config of a topic and a broker, with
/// synonyms when asked, and documentation when asked in the fake's own
/// words, from each config's facts: Kafka's description of each config is
/// its prose, which the fake does not carry.
#[tokio::test]
async fn configs_are_described_in_the_fakes_own_words() {
    let cluster = common::cluster(1, "described", 1).await;
    let mut probe = common::connect(&cluster, 0).await;
    let resource =
        |resource_type: i8, name: &str| describe_configs_request::DescribeConfigsResource {
            resource_type,
            resource_name: name.to_owned().into(),
            configuration_keys: None,
            ..Default::default()
        };
    let describe = |include_documentation| DescribeConfigsRequest {
        resources: vec![resource(2, "described"), resource(4, "0")].into(),
        include_synonyms: true,
        include_documentation,
        ..Default::default()
    };
    let answer: DescribeConfigsResponse = call(&mut probe, describe(true), 4).await;
    assert_eq!(answer.results.len(), 2);
    for (result, of) in answer.results.iter().zip(["topic", "broker"]) {
        assert_eq!(result.error_code, 0, "{:?}", result.resource_name);
        assert!(result.configs.len() > 30, "{:?}", result.resource_name);
        for config in result.configs.iter() {
            let text = config.documentation.as_deref().unwrap_or_default();
            assert!(
                text.starts_with(&format!("A {of} config: a ")),
                "{}: {text}",
                config.name
            );
            assert!(text.ends_with("(Described by the fake cluster from the config's facts.)"));
        }
        assert!(result.configs.iter().any(|c| !c.synonyms.is_empty()));
    }
    let mut retention = Vec::new();
    for result in answer.results.iter() {
        for config in result.configs.iter() {
            if config.name == "retention.ms" {
                retention.extend(config.documentation.as_deref().map(str::to_owned));
            }
        }
    }
    assert_eq!(
        retention,
        ["A topic config: a 64-bit integer, 604800000 by default. (Described by the fake cluster from the config's facts.)"]
    );
    let answer: DescribeConfigsResponse = call(&mut probe, describe(false), 4).await;
    assert!(answer
        .results
        .iter()
        .all(|r| r.configs.iter().all(|c| c.documentation.is_none())));
}
