//! What one request can make the cluster spend is bounded by its size: the
//! two faults of `mini_broker` (the example broker the fake replaced) that
//! the other limit tests do not reach. An OffsetCommit of many partitions
//! under one long topic name copied that name once per partition; a
//! JoinGroup chose its protocol in time quadratic in the protocols listed.
//!
//! The heap is counted per thread (`kafka_wire_test_support::heap`): the
//! cluster runs on this test's thread, in a current-thread runtime, and the
//! client on a thread of its own, so that only the cluster's allocations
//! are counted.

mod common;

use std::time::{Duration, Instant};

use kafka_wire::messages::{
    join_group_request, offset_commit_request, JoinGroupRequest, OffsetCommitRequest,
};
use kafka_wire::ErrorCode;
use kafka_wire_fake::FakeCluster;
use kafka_wire_test_support::heap;

#[global_allocator]
static ALLOCATOR: heap::Tracking = heap::Tracking;

/// Runs a one-broker cluster on this thread while `client` runs on a
/// thread of its own with the broker's address, and returns the client's
/// result with the cluster's peak heap meanwhile.
fn serve_while<R: Send + 'static>(client: impl FnOnce(String) -> R + Send + 'static) -> (R, usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let cluster = runtime
        .block_on(FakeCluster::builder().brokers(1).start())
        .expect("start");
    let address = cluster.broker_address(0).expect("a broker");
    let (done, finished) = tokio::sync::oneshot::channel();
    let thread = std::thread::spawn(move || {
        let _ = done.send(client(address));
    });
    let (result, peak) = heap::peak_during(|| runtime.block_on(finished));
    thread.join().expect("the client thread");
    (result.expect("the client's result"), peak)
}

/// A current-thread runtime for a client thread.
fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn an_offset_commit_copies_each_topic_name_once() {
    const PARTITIONS: i32 = 50_000;
    let name = "t".repeat(8 * 1024);
    let request = OffsetCommitRequest {
        group_id: "bounded".into(),
        generation_id_or_member_epoch: -1,
        topics: vec![offset_commit_request::OffsetCommitRequestTopic {
            name: name.into(),
            partitions: (0..PARTITIONS)
                .map(|p| offset_commit_request::OffsetCommitRequestPartition {
                    partition_index: p,
                    committed_offset: i64::from(p),
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let size = kafka_wire::runtime::Encode::encoded_len(&request, 8);
    let (codes, peak) = serve_while(move |address| {
        client_runtime().block_on(async move {
            let mut probe = kafka_wire_fake::probe::Probe::connect(&address)
                .await
                .expect("connect");
            let response = common::call(&mut probe, request, 8).await;
            response
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| p.error_code)
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
    });
    // No topic has this name (Kafka allows 249 characters): each partition
    // is UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers it.
    assert_eq!(codes.len(), PARTITIONS as usize);
    assert!(codes.iter().all(|&code| code == 3), "{:?}", &codes[..3]);
    // The request held once and its answer: some tens of bytes per
    // partition. A name copied per partition would be 400 MiB.
    let bound = 32 * size + (1 << 20);
    eprintln!(
        "OffsetCommit of {size} bytes: the cluster's heap peaked at {peak} bytes (bound {bound})"
    );
    assert!(
        peak < bound,
        "OffsetCommit of {size} bytes: the cluster's heap peaked at {peak} bytes, over {bound}"
    );
}

#[tokio::test]
async fn a_join_group_chooses_among_many_protocols_in_linear_time() {
    const PROTOCOLS: usize = 200_000;
    let join = |member_id: String| JoinGroupRequest {
        group_id: "many-protocols".into(),
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 10_000,
        member_id: member_id.into(),
        protocol_type: "consumer".into(),
        protocols: (0..PROTOCOLS)
            .map(|i| join_group_request::JoinGroupRequestProtocol {
                name: format!("p{i}").into(),
                ..Default::default()
            })
            .collect::<Vec<_>>()
            .into(),
        ..Default::default()
    };
    let cluster = FakeCluster::builder()
        .brokers(1)
        .start()
        .await
        .expect("start");
    let mut probe = common::connect(&cluster, 0).await;
    let first = common::call(&mut probe, join(String::new()), 9).await;
    assert_eq!(first.error_code, ErrorCode::MemberIdRequired.code());
    let member = first.member_id.to_string();
    // Linear, the choice takes milliseconds; the quadratic one compared
    // forty billion names (minutes in a test build). The answer is timed
    // rather than awaited with a timeout: a worker busy choosing holds the
    // cluster's state, and no timer would fire meanwhile.
    let started = Instant::now();
    let joined = common::call(&mut probe, join(member), 9).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "the JoinGroup answer took {took:?}: the protocol choice is not linear"
    );
    assert_eq!(joined.error_code, 0);
    // Every protocol is everyone's; the member's first preference wins.
    assert_eq!(joined.protocol_name.as_deref(), Some("p0"));
}
