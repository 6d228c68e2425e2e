//! Replay from a capture: a synthetic pcap, written here from encoded
//! frames (no root, no tcpdump), turned into cases and played to two
//! fakes. Played to the same kind of fake on both sides it reports no
//! difference; with a fault at one request on the candidate, exactly that
//! request's case differs.

use std::time::{Duration, Instant};

use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use kafka_wire_capture::EventKind;
use kafka_wire_compat::case::{Check, Route, VersionChoice};
use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::replay::{from_capture, Replay, ReplayError};
use kafka_wire_compat::report::{text, Report};
use kafka_wire_compat::Verdict;
use kafka_wire_fake::control::FaultSpec;
use kafka_wire_fake::FakeCluster;
use kafka_wire_test_support::bodies::produce_one_record;
use kafka_wire_test_support::frames::{request_bytes, response_bytes};
use kafka_wire_test_support::pcap::{pcap, Flow, Frame, Link};
use serde_json::{json, Value};

const TOPIC_ID: &str = "Wk3bH1lSR3ahwDMnYTZn6A";

fn request(api: ApiKey, version: i16, correlation_id: i32, body: Value) -> Vec<u8> {
    let body = RequestBody::from_json(&body, api, version)
        .unwrap_or_else(|e| panic!("{} v{version}: {e}", api.name()));
    request_bytes(version, correlation_id, "replay-test", body)
}

fn response(api: ApiKey, version: i16, correlation_id: i32, body: Option<Value>) -> Vec<u8> {
    let body = match body {
        Some(body) => {
            let mut full = ResponseBody::default_for(api).to_json(version);
            kafka_wire::runtime::json::overlay(&mut full, body);
            ResponseBody::from_json(&full, api, version)
                .unwrap_or_else(|e| panic!("{} v{version}: {e}", api.name()))
        }
        None => ResponseBody::default_for(api),
    };
    response_bytes(version, correlation_id, body)
}

/// A request and its answer on `flow`.
fn exchange(flow: &mut Flow, request: Vec<u8>, response: Vec<u8>) -> Vec<Frame> {
    let mut frames = flow.send(true, &request, 1460);
    frames.extend(flow.send(false, &response, 1460));
    frames
}

/// Two client connections to port 9092: a producer (ApiVersions,
/// Metadata, Produce to partition 0 of `orders`) and a consumer
/// (FindCoordinator for group `readers`, Fetch by topic id, DescribeConfigs
/// of `orders`). The consumer starts a second after the producer; with
/// `consumer_first`, its packets come first in the file.
fn capture_ordered(consumer_first: bool) -> Vec<u8> {
    let mut producer = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut consumer = Flow::new("10.0.0.3:50001", "10.0.0.2:9092", Link::Ethernet);
    consumer.time += 1_000_000_000;
    let mut frames = producer.handshake();
    let mut consumed = consumer.handshake();
    frames.extend(exchange(
        &mut producer,
        request(
            ApiKey::ApiVersions,
            3,
            1,
            json!({"clientSoftwareName": "app", "clientSoftwareVersion": "1"}),
        ),
        response(ApiKey::ApiVersions, 3, 1, None),
    ));
    frames.extend(exchange(
        &mut producer,
        request(
            ApiKey::Metadata,
            12,
            2,
            json!({"topics": [{"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}],
                   "allowAutoTopicCreation": false, "includeTopicAuthorizedOperations": false}),
        ),
        response(
            ApiKey::Metadata,
            12,
            2,
            Some(
                json!({"topics": [{"errorCode": 0, "name": "orders", "topicId": TOPIC_ID,
                "isInternal": false, "topicAuthorizedOperations": -2147483648i64,
                "partitions": [
                  {"errorCode": 0, "partitionIndex": 0, "leaderId": 0, "leaderEpoch": 0,
                   "replicaNodes": [0], "isrNodes": [0], "offlineReplicas": []},
                  {"errorCode": 0, "partitionIndex": 1, "leaderId": 0, "leaderEpoch": 0,
                   "replicaNodes": [0], "isrNodes": [0], "offlineReplicas": []}]}]}),
            ),
        ),
    ));
    let produce = request_bytes(9, 3, "replay-test", produce_one_record(1).into());
    frames.extend(exchange(
        &mut producer,
        produce,
        response(ApiKey::Produce, 9, 3, None),
    ));
    consumed.extend(exchange(
        &mut consumer,
        request(
            ApiKey::FindCoordinator,
            4,
            1,
            json!({"keyType": 0, "coordinatorKeys": ["readers"]}),
        ),
        response(ApiKey::FindCoordinator, 4, 1, None),
    ));
    consumed.extend(exchange(
        &mut consumer,
        request(
            ApiKey::Fetch,
            13,
            2,
            json!({"replicaId": -1, "maxWaitMs": 10, "minBytes": 1, "maxBytes": 1048576,
                   "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
                   "topics": [{"topicId": TOPIC_ID, "partitions": [
                       {"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": 0,
                        "lastFetchedEpoch": -1, "logStartOffset": -1,
                        "partitionMaxBytes": 1048576}]}],
                   "forgottenTopicsData": [], "rackId": ""}),
        ),
        response(ApiKey::Fetch, 13, 2, None),
    ));
    consumed.extend(exchange(
        &mut consumer,
        request(
            ApiKey::DescribeConfigs,
            4,
            3,
            json!({"resources": [{"resourceType": 2, "resourceName": "orders",
                                  "configurationKeys": ["cleanup.policy"]}],
                   "includeSynonyms": false, "includeDocumentation": false}),
        ),
        response(ApiKey::DescribeConfigs, 4, 3, None),
    ));
    frames.extend(producer.close());
    consumed.extend(consumer.close());
    if consumer_first {
        consumed.extend(frames);
        return pcap(1, false, &consumed);
    }
    frames.extend(consumed);
    pcap(1, false, &frames)
}

fn capture() -> Vec<u8> {
    capture_ordered(false)
}

fn play(reference: &str, candidate: &str, replay: Replay) -> Report {
    let mut config = Config::new(reference, candidate);
    config.surface = false;
    config.sweep = false;
    config.scenarios = Vec::new();
    config.timeout = Duration::from_secs(5);
    config.replay = Some(replay);
    let engine = Engine::new(config, Instant::now(), unix_ms());
    run_blocking(engine, &DriverConfig::default(), |_| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

const CASES: [&str; 5] = [
    "replay/conn-1/2-Metadata-v12",
    "replay/conn-1/3-Produce-v9",
    "replay/conn-2/1-FindCoordinator-v4",
    "replay/conn-2/2-Fetch-v13",
    "replay/conn-2/3-DescribeConfigs-v4",
];

#[test]
fn a_capture_becomes_cases_in_order_with_the_handshake_skipped() {
    let replay = from_capture(&capture(), 9092).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = replay.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, CASES);
    assert_eq!(replay.connections, 2);
    assert_eq!(replay.skipped.len(), 1, "{:?}", replay.skipped);
    assert_eq!(replay.skipped[0].at, "conn-1/1 ApiVersions v3");
    assert_eq!(replay.topics.len(), 1);
    assert_eq!(replay.topics[0].0, "orders");
    assert_eq!(replay.topics[0].1.partitions, 2);
    let step = |at: usize| match &replay.cases[at].check {
        Check::Steps(steps) => steps[0].clone(),
        Check::Surface(_) => panic!("a surface case"),
    };
    assert_eq!(
        step(1).route,
        Route::Leader {
            topic: "${topic.orders}".into(),
            partition: 0
        }
    );
    assert_eq!(step(1).body["topicData"][0]["name"], "${topic.orders}");
    assert_eq!(step(2).body["coordinatorKeys"], json!(["${group.readers}"]));
    assert_eq!(step(3).body["topics"][0]["topicId"], "${topicId.orders}");
    assert_eq!(step(3).body["rackId"], "");
    assert_eq!(
        step(4).body["resources"][0]["resourceName"],
        "${topic.orders}"
    );
    assert_eq!(step(4).version, VersionChoice::Exact(4));
    // Cases follow the time each request was sent, not the file's order.
    let reordered = from_capture(&capture_ordered(true), 9092).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = reordered.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, CASES);
    // Another port holds nothing.
    assert!(matches!(
        from_capture(&capture(), 9093),
        Err(ReplayError::Empty { port: 9093 })
    ));
}

#[test]
fn a_truncated_or_malformed_capture_is_an_error_naming_where() {
    let whole = capture();
    let cut = &whole[..whole.len() - 30];
    let error = from_capture(cut, 9092).map(|_| ()).unwrap_err();
    assert!(matches!(error, ReplayError::Truncated { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("the capture is cut short at "),
        "{error}"
    );
    let error = from_capture(b"not a capture at all", 9092)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(error, ReplayError::Capture(_)), "{error}");
    // A request whose body does not decode: Metadata v12 whose topics
    // array claims more entries than it holds.
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut frames = flow.handshake();
    let mut bad = request(
        ApiKey::Metadata,
        12,
        7,
        json!({"topics": [], "allowAutoTopicCreation": false,
               "includeTopicAuthorizedOperations": false}),
    );
    let header_end = bad.len() - 4;
    bad[header_end] = 0x7f;
    frames.extend(exchange(
        &mut flow,
        bad,
        response(ApiKey::Metadata, 12, 7, None),
    ));
    frames.extend(flow.close());
    let error = from_capture(&pcap(1, false, &frames), 9092)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(error, ReplayError::Request { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "conn-1/1 Metadata v12: the request does not decode: \
         MetadataRequest.topics at byte 23: length 126 exceeds the 3 byte(s) left"
    );
    // A segment lost in the middle of a request: a gap on conn-1.
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut frames = flow.handshake();
    frames.extend(exchange(
        &mut flow,
        request(
            ApiKey::Metadata,
            12,
            1,
            json!({"topics": [], "allowAutoTopicCreation": false,
                   "includeTopicAuthorizedOperations": false}),
        ),
        response(ApiKey::Metadata, 12, 1, None),
    ));
    let produce = request_bytes(9, 2, "replay-test", produce_one_record(1).into());
    let before = frames.len();
    frames.extend(flow.send(true, &produce, 40));
    assert!(frames.len() - before > 3);
    frames.remove(before + 1);
    frames.extend(flow.send(false, &response(ApiKey::Produce, 9, 2, None), 1460));
    frames.extend(flow.close());
    let error = from_capture(&pcap(1, false, &frames), 9092)
        .map(|_| ())
        .unwrap_err();
    match &error {
        ReplayError::Stream {
            at, client, kind, ..
        } => {
            assert_eq!(at, "conn-1", "{error}");
            assert_eq!(client, "10.0.0.1:50000");
            assert_eq!(*kind, EventKind::Gap, "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_replay_against_the_fake_compares_and_a_fault_shows_at_its_case() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let (reference, candidate, faulty, three) = runtime.block_on(async {
        let a = FakeCluster::builder().brokers(1).start().await;
        let b = FakeCluster::builder().brokers(1).start().await;
        let c = FakeCluster::builder().brokers(1).start().await;
        let d = FakeCluster::builder().brokers(3).start().await;
        (a, b, c, d)
    });
    let reference = reference.unwrap_or_else(|e| panic!("{e}"));
    let candidate = candidate.unwrap_or_else(|e| panic!("{e}"));
    let faulty = faulty.unwrap_or_else(|e| panic!("{e}"));
    let three = three.unwrap_or_else(|e| panic!("{e}"));
    let replay = from_capture(&capture(), 9092).unwrap_or_else(|e| panic!("{e}"));

    let report = play(
        &reference.bootstrap(),
        &candidate.bootstrap(),
        replay.clone(),
    );
    let mut shown = Vec::new();
    let _ = text::write(&report, &mut shown);
    let shown = String::from_utf8_lossy(&shown);
    let names: Vec<&str> = report.cases.iter().map(|c| c.case.as_str()).collect();
    assert_eq!(names, CASES, "{shown}");
    assert!(report.cases.iter().all(|c| c.area.name() == "replay"));
    assert_eq!(report.remaining(), 0, "{shown}");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("replay conn-1/1 ApiVersions v3: skipped")),
        "{:?}",
        report.notes
    );

    // Three brokers against one: each request goes to its partition's
    // leader or its group's coordinator, on either side.
    let first = three
        .bootstrap()
        .split(',')
        .next()
        .unwrap_or_default()
        .to_owned();
    let report = play(&first, &candidate.bootstrap(), replay.clone());
    let mut shown = Vec::new();
    let _ = text::write(&report, &mut shown);
    assert_eq!(report.remaining(), 0, "{}", String::from_utf8_lossy(&shown));
    assert_eq!(report.reference.brokers, 3);

    let fault = FaultSpec::parse("describe-configs:error=cluster_authorization_failed")
        .unwrap_or_else(|e| panic!("{e}"));
    faulty.apply_fault(&fault).unwrap_or_else(|e| panic!("{e}"));
    let report = play(&reference.bootstrap(), &faulty.bootstrap(), replay);
    let differ: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Same)
        .map(|c| c.case.as_str())
        .collect();
    assert_eq!(
        differ,
        ["replay/conn-2/3-DescribeConfigs-v4"],
        "{:?}",
        report.cases
    );
    let case = &report.cases[4];
    // The fault's answer holds no result for the topic the request named.
    assert_eq!(case.case, "replay/conn-2/3-DescribeConfigs-v4");
    assert_eq!(case.differences.len(), 1, "{case:?}");
    assert_eq!(case.differences[0].path, "results[0]", "{case:?}");
    assert_eq!(
        case.differences[0].reference["resourceName"],
        "<run>-orders"
    );
    assert_eq!(case.differences[0].candidate, Value::Null);
    runtime.block_on(async {
        reference.shutdown().await.ok();
        candidate.shutdown().await.ok();
        faulty.shutdown().await.ok();
        three.shutdown().await.ok();
    });
}
