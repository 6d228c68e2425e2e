//! `kafka-protocol pcap` run as a user runs it, over captures written by
//! test-support's pcap module: the exact lines, the filters, the summary,
//! standard input, and what is not a capture.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use kafka_wire::messages::*;
use kafka_wire::{RequestBody, ResponseBody};
use kafka_wire_test_support::bodies::{
    api_versions_refused, one_record_batch, pre_vote, produce_one_record,
};
use kafka_wire_test_support::frames::{request_bytes, response_bytes};
use kafka_wire_test_support::pcap::{pcap, Flow, Frame, Link, EXCHANGE_JSON_KEYS};
use kafka_wire_test_support::process::run_with_input;
use serde_json::Value;

/// What a run of the binary produced.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Asserts success with nothing on standard error; the output's lines.
    fn lines(&self) -> Vec<&str> {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert!(self.stderr.is_empty(), "stderr: {}", self.stderr);
        self.stdout.lines().collect()
    }

    /// Asserts exit status 1, no output and one `error: ` line, returned.
    fn failure(&self) -> &str {
        assert_eq!(self.code, Some(1), "stderr: {}", self.stderr);
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout);
        assert!(self.stderr.starts_with("error: "), "{}", self.stderr);
        assert_eq!(self.stderr.lines().count(), 1, "{}", self.stderr);
        self.stderr.trim_end()
    }
}

/// Runs `kafka-protocol pcap ARGS`, feeding `stdin`.
fn pcap_cli(args: &[&str], stdin: &[u8]) -> Run {
    let output = run_with_input(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .arg("pcap")
            .args(args),
        stdin,
    );
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Writes `contents` to a new file under the tests' temporary directory.
fn temp_file(contents: &[u8]) -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pcap-{}-{n}.pcap", std::process::id()));
    std::fs::write(&path, contents).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
    path.to_str().expect("a UTF-8 path").to_owned()
}

fn request(body: RequestBody<'static>, version: i16, correlation_id: i32) -> Vec<u8> {
    request_bytes(version, correlation_id, "pcap-test", body)
}

fn response(body: ResponseBody<'static>, version: i16, correlation_id: i32) -> Vec<u8> {
    response_bytes(version, correlation_id, body)
}

/// A Produce v9 with `acks`, carrying [`one_record_batch`].
fn produce(acks: i16, correlation_id: i32) -> Vec<u8> {
    request(produce_one_record(acks).into(), 9, correlation_id)
}

/// One connection from 10.0.0.1:50000 to 10.0.0.2:9092: a Produce with
/// records, one with acks=0, a Metadata answered with an error, an
/// ApiVersions v4 answered at v0 (the fallback) and a Vote v2 with
/// preVote true; then closed.
fn exchanges(flow: &mut Flow) -> Vec<Frame> {
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &produce(1, 1), 1460));
    let produced = ProduceResponse {
        responses: vec![produce_response::TopicProduceResponse {
            name: "orders".into(),
            partition_responses: vec![produce_response::PartitionProduceResponse {
                index: 0,
                base_offset: 41,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    frames.extend(flow.send(false, &response(produced.into(), 9, 1), 1460));
    frames.extend(flow.send(true, &produce(0, 2), 1460));
    let metadata = MetadataRequest {
        topics: Some(
            vec![metadata_request::MetadataRequestTopic {
                name: Some("missing".into()),
                ..Default::default()
            }]
            .into(),
        ),
        ..Default::default()
    };
    frames.extend(flow.send(true, &request(metadata.into(), 12, 3), 1460));
    let unknown = MetadataResponse {
        topics: vec![metadata_response::MetadataResponseTopic {
            error_code: 3,
            name: Some("missing".into()),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    frames.extend(flow.send(false, &response(unknown.into(), 12, 3), 1460));
    frames.extend(flow.send(
        true,
        &request(ApiVersionsRequest::default().into(), 4, 4),
        1460,
    ));
    let refused = api_versions_refused();
    frames.extend(flow.send(false, &response(refused.into(), 0, 4), 1460));
    let vote = pre_vote();
    frames.extend(flow.send(true, &request(vote.into(), 2, 5), 1460));
    frames.extend(flow.send(false, &response(VoteResponse::default().into(), 2, 5), 1460));
    frames.extend(flow.close());
    frames
}

/// A second connection, [fd00::1]:50001 to [fd00::2]:9092, later: its
/// first request's first 20 bytes are lost (a gap, the response unpaired,
/// a resync), then a Metadata never answered.
fn losses(flow: &mut Flow) -> Vec<Frame> {
    let mut frames = flow.handshake();
    let first = request(MetadataRequest::default().into(), 12, 1);
    frames.extend(flow.send(true, &first, 20).into_iter().skip(1));
    frames.extend(flow.send(
        false,
        &response(MetadataResponse::default().into(), 12, 1),
        1460,
    ));
    frames.extend(flow.send(
        true,
        &request(MetadataRequest::default().into(), 12, 2),
        1460,
    ));
    frames.extend(flow.close());
    frames
}

fn capture() -> Vec<u8> {
    let mut one = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut frames = exchanges(&mut one);
    let mut two = Flow::new("[fd00::1]:50001", "[fd00::2]:9092", Link::Ethernet);
    two.time = one.time + 1_000_000;
    frames.extend(losses(&mut two));
    pcap(1, false, &frames)
}

/// The lines of `capture()` with --records: five exchanges, four events.
const LINES: [&str; 9] = [
    r#"{"time":"2026-12-07T01:02:03.003000Z","client":"10.0.0.1:50000","broker":"10.0.0.2:9092","api":"Produce","version":9,"correlationId":1,"clientId":"pcap-test","request":{"transactionalId":null,"acks":1,"timeoutMs":1000,"topicData":[{"name":"orders","partitionData":[{"index":0,"records":{"batches":[{"baseOffset":0,"batchLength":62,"partitionLeaderEpoch":-1,"magic":2,"crc":922701251,"attributes":0,"compression":"none","timestampType":"CreateTime","isTransactional":false,"isControl":false,"lastOffsetDelta":0,"baseTimestamp":1700000000000,"maxTimestamp":1700000000000,"producerId":-1,"producerEpoch":-1,"baseSequence":-1,"records":[{"offset":0,"timestamp":1700000000000,"key":"aw==","keyUtf8":"k","value":"aGVsbG8=","valueUtf8":"hello","headers":[]}]}],"partialTail":null}}]}]},"response":{"responses":[{"name":"orders","partitionResponses":[{"index":0,"errorCode":0,"baseOffset":41,"logAppendTimeMs":-1,"logStartOffset":-1,"recordErrors":[],"errorMessage":null}]}],"throttleTimeMs":0},"latencyUs":1000}"#,
    r#"{"time":"2026-12-07T01:02:03.005000Z","client":"10.0.0.1:50000","broker":"10.0.0.2:9092","api":"Produce","version":9,"correlationId":2,"clientId":"pcap-test","request":{"transactionalId":null,"acks":0,"timeoutMs":1000,"topicData":[{"name":"orders","partitionData":[{"index":0,"records":{"batches":[{"baseOffset":0,"batchLength":62,"partitionLeaderEpoch":-1,"magic":2,"crc":922701251,"attributes":0,"compression":"none","timestampType":"CreateTime","isTransactional":false,"isControl":false,"lastOffsetDelta":0,"baseTimestamp":1700000000000,"maxTimestamp":1700000000000,"producerId":-1,"producerEpoch":-1,"baseSequence":-1,"records":[{"offset":0,"timestamp":1700000000000,"key":"aw==","keyUtf8":"k","value":"aGVsbG8=","valueUtf8":"hello","headers":[]}]}],"partialTail":null}}]}]},"response":null,"latencyUs":null}"#,
    r#"{"time":"2026-12-07T01:02:03.006000Z","client":"10.0.0.1:50000","broker":"10.0.0.2:9092","api":"Metadata","version":12,"correlationId":3,"clientId":"pcap-test","request":{"topics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAA","name":"missing"}],"allowAutoTopicCreation":true,"includeTopicAuthorizedOperations":false},"response":{"throttleTimeMs":0,"brokers":[],"clusterId":null,"controllerId":-1,"topics":[{"errorCode":3,"name":"missing","topicId":"AAAAAAAAAAAAAAAAAAAAAA","isInternal":false,"partitions":[],"topicAuthorizedOperations":-2147483648}]},"latencyUs":1000}"#,
    r#"{"time":"2026-12-07T01:02:03.008000Z","client":"10.0.0.1:50000","broker":"10.0.0.2:9092","api":"ApiVersions","version":4,"correlationId":4,"clientId":"pcap-test","request":{"clientSoftwareName":"","clientSoftwareVersion":""},"response":{"errorCode":35,"apiKeys":[]},"latencyUs":1000}"#,
    r#"{"time":"2026-12-07T01:02:03.010000Z","client":"10.0.0.1:50000","broker":"10.0.0.2:9092","api":"Vote","version":2,"correlationId":5,"clientId":"pcap-test","request":{"clusterId":null,"voterId":-1,"topics":[{"topicName":"__cluster_metadata","partitions":[{"partitionIndex":0,"replicaEpoch":5,"replicaId":1,"replicaDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","lastOffsetEpoch":0,"lastOffset":0,"preVote":true}]}]},"response":{"errorCode":0,"topics":[],"nodeEndpoints":[]},"latencyUs":1000}"#,
    r#"{"event":"gap","client":"[fd00::1]:50001","broker":"[fd00::2]:9092","time":"2026-12-07T01:02:03.021000Z","detail":"20 bytes from the client not captured"}"#,
    r#"{"event":"unpaired-response","client":"[fd00::1]:50001","broker":"[fd00::2]:9092","time":"2026-12-07T01:02:03.021000Z","detail":"a response with correlation id 1, whose request was not captured"}"#,
    r#"{"event":"resync","client":"[fd00::1]:50001","broker":"[fd00::2]:9092","time":"2026-12-07T01:02:03.022000Z","detail":"8 bytes skipped to the next frame boundary"}"#,
    r#"{"event":"unanswered","client":"[fd00::1]:50001","broker":"[fd00::2]:9092","time":"2026-12-07T01:02:03.024000Z","detail":"Metadata v12 request (correlation id 2) never answered: the connection closed"}"#,
];

#[test]
fn one_line_per_exchange_and_per_event() {
    let file = temp_file(&capture());
    let run = pcap_cli(&["--records", &file], b"");
    assert_eq!(run.lines(), LINES);
    // The keys the proxy's log has are the same, in the same order.
    let line: Value = serde_json::from_str(LINES[0]).expect("JSON");
    let keys: Vec<&str> = line
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, EXCHANGE_JSON_KEYS);

    // Without --records, the blobs stay base64; the rest is the same.
    let run = pcap_cli(&[&file], b"");
    let lines = run.lines();
    assert_eq!(lines.len(), LINES.len());
    let produce: Value = serde_json::from_str(lines[0]).expect("JSON");
    let records = &produce["request"]["topicData"][0]["partitionData"][0]["records"];
    assert!(
        records
            .as_str()
            .is_some_and(|b| b.starts_with("AAAAAAAAAAAAAAA+")),
        "{records}"
    );
    assert_eq!(lines[2..], LINES[2..]);
}

#[test]
fn standard_input_reads_the_same() {
    let run = pcap_cli(&["--records", "-"], &capture());
    assert_eq!(run.lines(), LINES);
}

#[test]
fn api_keeps_only_those_exchanges_and_every_event() {
    let file = temp_file(&capture());
    let run = pcap_cli(&["--records", "--api", "vote", "--api", "3", &file], b"");
    let mut expected = vec![LINES[2], LINES[4]];
    expected.extend(&LINES[5..]);
    assert_eq!(run.lines(), expected);
    let run = pcap_cli(&["--api", "Nope", &file], b"");
    assert_eq!(
        run.failure(),
        "error: unknown api `Nope` (run `kafka-protocol apis` for the list)"
    );
}

#[test]
fn port_picks_the_streams_read_as_kafka() {
    let (request_bytes, response_bytes) = (
        request(ApiVersionsRequest::default().into(), 3, 9),
        response(ApiVersionsResponse::default().into(), 3, 9),
    );
    let mut flow = Flow::new("10.0.0.3:50002", "10.0.0.4:7000", Link::Ethernet);
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &request_bytes, 1460));
    frames.extend(flow.send(false, &response_bytes, 1460));
    frames.extend(flow.close());
    let mut other = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    other.time = flow.time;
    frames.extend(exchanges(&mut other));
    let file = temp_file(&pcap(1, false, &frames));
    let brokers = |args: &[&str]| -> Vec<String> {
        pcap_cli(args, b"")
            .lines()
            .iter()
            .map(|line| {
                let line: Value = serde_json::from_str(line).expect("JSON");
                format!("{} {}", line["broker"].as_str().unwrap_or("-"), line["api"])
            })
            .collect()
    };
    let on_9092 = [
        "10.0.0.2:9092 \"Produce\"",
        "10.0.0.2:9092 \"Produce\"",
        "10.0.0.2:9092 \"Metadata\"",
        "10.0.0.2:9092 \"ApiVersions\"",
        "10.0.0.2:9092 \"Vote\"",
    ];
    // Without --port, a stream whose first frame reads as a request is
    // Kafka, whatever its port.
    let mut all = vec!["10.0.0.4:7000 \"ApiVersions\""];
    all.extend(on_9092);
    assert_eq!(brokers(&[&file]), all);
    assert_eq!(
        brokers(&["--port", "7000", &file]),
        ["10.0.0.4:7000 \"ApiVersions\""]
    );
    assert_eq!(brokers(&["--port", "9092", &file]), on_9092);
    assert_eq!(brokers(&["--port", "9092", "--port", "7000", &file]), all);
}

const SUMMARY: &str = "\
exchanges	sasl_tokens
5	0

api	version	exchanges
Produce	9	2
Metadata	12	1
ApiVersions	4	1
Vote	2	1

api	answered	p50_us	p99_us
Produce	1	1000	1000
Metadata	1	1000	1000
ApiVersions	1	1000	1000
Vote	1	1000	1000

client_id	exchanges	bytes
pcap-test	5	572

topic	produced_bytes	fetched_bytes
orders	148	0

api	error_code	error	count
Metadata	3	UNKNOWN_TOPIC_OR_PARTITION	1
ApiVersions	35	UNSUPPORTED_VERSION	1

event	count
gap	1
resync	1
unpaired-response	1
unanswered	1
tls	0
undecodable	0
evicted	0
truncated-file	0
direction	0
";

#[test]
fn summary_as_a_table_and_as_json() {
    let file = temp_file(&capture());
    let run = pcap_cli(&["--summary", &file], b"");
    run.lines();
    assert_eq!(run.stdout, SUMMARY);

    let run = pcap_cli(&["--summary", "--json", &file], b"");
    assert_eq!(run.lines().len(), 1);
    let summary: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let expected = serde_json::json!({
        "exchanges": 5,
        "saslTokens": 0,
        "apis": [
            {"api": "Produce", "version": 9, "exchanges": 2},
            {"api": "Metadata", "version": 12, "exchanges": 1},
            {"api": "ApiVersions", "version": 4, "exchanges": 1},
            {"api": "Vote", "version": 2, "exchanges": 1},
        ],
        "latency": [
            {"api": "Produce", "answered": 1, "p50Us": 1000, "p99Us": 1000},
            {"api": "Metadata", "answered": 1, "p50Us": 1000, "p99Us": 1000},
            {"api": "ApiVersions", "answered": 1, "p50Us": 1000, "p99Us": 1000},
            {"api": "Vote", "answered": 1, "p50Us": 1000, "p99Us": 1000},
        ],
        "clients": [{"clientId": "pcap-test", "exchanges": 5, "bytes": 572}],
        "otherClients": {"exchanges": 0, "bytes": 0},
        // Two Produce requests (acks=1 and acks=0) of one 74-byte batch.
        "topics": [{"topic": "orders", "producedBytes": 148, "fetchedBytes": 0}],
        "otherTopics": {"producedBytes": 0, "fetchedBytes": 0},
        "errors": [
            {"api": "Metadata", "errorCode": 3, "error": "UNKNOWN_TOPIC_OR_PARTITION", "count": 1},
            {"api": "ApiVersions", "errorCode": 35, "error": "UNSUPPORTED_VERSION", "count": 1},
        ],
        "events": {
            "gap": 1, "resync": 1, "unpaired-response": 1, "unanswered": 1,
            "tls": 0, "undecodable": 0, "evicted": 0, "truncated-file": 0, "direction": 0,
        },
    });
    assert_eq!(summary, expected);
    assert_eq!(one_record_batch().len() * 2, 148);

    // --api applies to the summary too.
    let run = pcap_cli(&["--summary", "--json", "--api", "Vote", &file], b"");
    let summary: Value = serde_json::from_str(run.lines()[0]).expect("JSON");
    assert_eq!(summary["exchanges"], 1);
    assert_eq!(summary["events"]["gap"], 1);
}

#[test]
fn fetch_topics_by_name_and_by_id() {
    let topic_id = [7u8; 16];
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut frames = flow.handshake();
    let metadata = MetadataResponse {
        topics: vec![metadata_response::MetadataResponseTopic {
            name: Some("payments".into()),
            topic_id: kafka_wire::runtime::Uuid(topic_id),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    frames.extend(flow.send(
        true,
        &request(MetadataRequest::default().into(), 12, 1),
        1460,
    ));
    frames.extend(flow.send(false, &response(metadata.into(), 12, 1), 1460));
    for (version, correlation_id) in [(12, 2), (13, 3)] {
        let fetched = FetchResponse {
            responses: vec![fetch_response::FetchableTopicResponse {
                topic: "payments".into(),
                topic_id: kafka_wire::runtime::Uuid(topic_id),
                partitions: vec![fetch_response::PartitionData {
                    records: Some(one_record_batch().into()),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        };
        frames.extend(flow.send(
            true,
            &request(FetchRequest::default().into(), version, correlation_id),
            1460,
        ));
        frames.extend(flow.send(
            false,
            &response(fetched.into(), version, correlation_id),
            1460,
        ));
    }
    let file = temp_file(&pcap(1, false, &frames));
    let run = pcap_cli(&["--summary", "--json", &file], b"");
    let summary: Value = serde_json::from_str(run.lines()[0]).expect("JSON");
    // v12 names the topic, v13 gives its id, named by the Metadata answer.
    assert_eq!(
        summary["topics"],
        serde_json::json!([{"topic": "payments", "producedBytes": 0, "fetchedBytes": 148}])
    );
}

#[test]
fn a_cut_capture_is_read_and_what_is_not_a_capture_fails() {
    // Cut inside the last packet: what came before, then an event; exit 0.
    let mut bytes = capture();
    bytes.truncate(bytes.len() - 30);
    let run = pcap_cli(&["-"], &bytes);
    let lines = run.lines();
    assert_eq!(
        lines.last().copied(),
        Some(
            r#"{"event":"truncated-file","client":null,"broker":null,"time":"2026-12-07T01:02:03.025000Z","detail":"the file ends inside a block"}"#
        )
    );
    // A header and no packet: nothing to say.
    assert!(pcap_cli(&["-"], &pcap(1, false, &[])).lines().is_empty());

    let text = temp_file(b"hello, world\n");
    assert_eq!(
        pcap_cli(&[&text], b"").failure(),
        format!("error: {text}: not a pcap or pcapng capture: no pcap or pcapng magic number")
    );
    let empty = temp_file(b"");
    assert_eq!(
        pcap_cli(&[&empty], b"").failure(),
        format!("error: {empty}: not a pcap or pcapng capture: shorter than a file header")
    );
    assert_eq!(
        pcap_cli(&["-"], b"").failure(),
        "error: standard input: not a pcap or pcapng capture: shorter than a file header"
    );
    // Cut inside its file header (`head -c 10`): a file cut short, said so.
    let short = temp_file(&capture()[..10]);
    assert_eq!(
        pcap_cli(&[&short], b"").failure(),
        format!(
            "error: {short}: a pcap file cut short: its header takes 24 bytes, and there are only 10"
        )
    );
    // Cut inside the first packet (`head -c 100`): the time its record's
    // header holds, not the epoch.
    let lines = pcap_cli(&["-"], &capture()[..100]).lines().join("\n");
    assert_eq!(
        lines,
        r#"{"event":"truncated-file","client":null,"broker":null,"time":"2026-12-07T01:02:03.000000Z","detail":"the file ends inside a block"}"#
    );
    let missing = format!("{empty}.missing");
    assert!(pcap_cli(&[&missing], b"")
        .failure()
        .starts_with(&format!("error: cannot read {missing}: ")));
}

#[test]
fn usage_errors_exit_2() {
    for args in [&[][..], &["--json", "-"], &["--port", "x", "-"]] {
        let run = pcap_cli(args, b"");
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
    }
}
