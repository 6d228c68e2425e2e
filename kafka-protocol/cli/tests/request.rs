//! `kafka-protocol request` and `kafka-protocol versions` against a fake
//! broker on 127.0.0.1 that records what it was sent: negotiation, the
//! pinned table and JSON formats, and the one-line errors (no connection,
//! a response that does not decode, a timeout, a closed connection).

use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

use kafka_wire::frame::RequestFrame;
use kafka_wire::messages::{
    api_versions_response, metadata_response, ApiVersionsResponse, MetadataResponse,
};
use kafka_wire::{ApiKey, RequestBody};
use kafka_wire_test_support::fake_broker::Reply;
use kafka_wire_test_support::process::run_with_input;
use serde_json::{json, Value};

/// What the fake broker advertises: ApiVersions 0-3, Metadata 0-9, ListGroups
/// 0-5 (answered with bytes that do not decode), DescribeCluster 0-1 (never
/// answered), FindCoordinator 0-4 (the connection is closed instead), and a
/// key kafka-wire does not know.
const ADVERTISED: [(i16, i16, i16); 6] = [
    (18, 0, 3),
    (3, 0, 9),
    (16, 0, 5),
    (60, 0, 1),
    (10, 0, 4),
    (999, 0, 1),
];

/// Every (api key, version) the fake broker received, in order.
type Seen = Arc<Mutex<Vec<(i16, i16)>>>;

/// A fake broker that records what it is sent and answers as [`ADVERTISED`]
/// says.
fn fake_broker() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    let address = kafka_wire_test_support::fake_broker::fake_broker(move |request, _| {
        let version = request.api_version();
        record
            .lock()
            .unwrap()
            .push((request.header.request_api_key, version));
        answer(request, version)
    });
    (address.to_string(), seen)
}

fn answer(request: &RequestFrame<'_>, version: i16) -> Reply {
    match request.body {
        // Above v3, what a broker answers a version it lacks: a v0 body
        // with UNSUPPORTED_VERSION, listing its range.
        RequestBody::ApiVersions(_) if version > 3 => Reply::AnswerAt(
            ApiVersionsResponse {
                error_code: 35,
                api_keys: vec![api_versions_response::ApiVersion {
                    api_key: 18,
                    min_version: 0,
                    max_version: 3,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }
            .into(),
            0,
        ),
        RequestBody::ApiVersions(_) => Reply::Answer(
            ApiVersionsResponse {
                api_keys: ADVERTISED
                    .iter()
                    .map(
                        |&(api_key, min_version, max_version)| api_versions_response::ApiVersion {
                            api_key,
                            min_version,
                            max_version,
                            ..Default::default()
                        },
                    )
                    .collect(),
                ..Default::default()
            }
            .into(),
        ),
        RequestBody::Metadata(_) => Reply::Answer(
            MetadataResponse {
                brokers: vec![metadata_response::MetadataResponseBroker {
                    node_id: 7,
                    host: "127.0.0.1".into(),
                    port: 9092,
                    ..Default::default()
                }]
                .into(),
                cluster_id: Some("fake".into()),
                controller_id: 7,
                ..Default::default()
            }
            .into(),
        ),
        RequestBody::ListGroups(_) => {
            // A correlation id, then a body cut short.
            let mut out = 6i32.to_be_bytes().to_vec();
            out.extend_from_slice(&request.header.correlation_id.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            Reply::Bytes(out)
        }
        RequestBody::DescribeCluster(_) => Reply::Nothing,
        _ => Reply::Close,
    }
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn ok(self) -> String {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert!(self.stderr.is_empty(), "stderr: {}", self.stderr);
        self.stdout
    }

    /// Status 1, nothing on standard output, one `error: ` line.
    fn error(self) -> String {
        assert_eq!(
            self.code,
            Some(1),
            "stdout: {} stderr: {}",
            self.stdout,
            self.stderr
        );
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout);
        assert!(
            self.stderr.starts_with("error: "),
            "stderr: {}",
            self.stderr
        );
        assert_eq!(self.stderr.lines().count(), 1, "stderr: {}", self.stderr);
        self.stderr.trim_end().to_owned()
    }
}

fn run(args: &[&str], stdin: &str) -> Run {
    let out = run_with_input(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol")).args(args),
        stdin.as_bytes(),
    );
    Run {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn versions_prints_the_pinned_table() {
    let (address, seen) = fake_broker();
    let table = run(&["versions", "--bootstrap", &address], "").ok();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "key\tname\tbroker_min\tbroker_max\tours_min\tours_max\tchosen"
    );
    // Every api either side has, once, by key.
    let keys: Vec<i16> = lines[1..]
        .iter()
        .map(|line| line.split('\t').next().unwrap().parse().unwrap())
        .collect();
    let mut expected: Vec<i16> = ApiKey::ALL.iter().map(|api| api.key()).collect();
    expected.push(999);
    expected.sort_unstable();
    assert_eq!(keys, expected);
    let row = |key: &str| {
        lines
            .iter()
            .find(|line| line.split('\t').next() == Some(key))
            .copied()
            .unwrap()
    };
    let metadata = ApiKey::Metadata.highest_stable_version();
    assert_eq!(row("3"), format!("3\tMetadata\t0\t9\t0\t{metadata}\t9"));
    let produce = ApiKey::Produce.highest_stable_version();
    assert_eq!(row("0"), format!("0\tProduce\t-\t-\t3\t{produce}\t-"));
    assert_eq!(row("999"), "999\t-\t0\t1\t-\t-\t-");
    let api_versions = ApiKey::ApiVersions.highest_stable_version();
    assert_eq!(
        row("18"),
        format!("18\tApiVersions\t0\t3\t0\t{api_versions}\t3")
    );
    // Asked at our highest ApiVersions version, then at the broker's.
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked, [(18, api_versions), (18, 3)]);
}

#[test]
fn versions_json_has_the_same_keys_with_null() {
    let (address, _) = fake_broker();
    let out = run(&["versions", "--bootstrap", &address, "--json"], "").ok();
    let rows: Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), ApiKey::ALL.len() + 1);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "key",
            "name",
            "broker_min",
            "broker_max",
            "ours_min",
            "ours_max",
            "chosen"
        ]
    );
    let unknown = rows.iter().find(|row| row["key"] == 999).unwrap();
    assert_eq!(
        unknown,
        &json!({"key": 999, "name": null, "broker_min": 0, "broker_max": 1,
                "ours_min": null, "ours_max": null, "chosen": null})
    );
    let fetch = rows.iter().find(|row| row["key"] == 1).unwrap();
    assert_eq!(fetch["broker_min"], Value::Null);
    assert_eq!(fetch["ours_min"], ApiKey::Fetch.lowest_version());
}

#[test]
fn request_negotiates_the_highest_common_version() {
    let (address, seen) = fake_broker();
    let out = run(
        &["request", "--bootstrap", &address, "--api", "metadata"],
        r#"{"topics": null}"#,
    )
    .ok();
    let response: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(response["brokers"][0]["nodeId"], 7);
    assert_eq!(response["clusterId"], "fake");
    // Version 9 fields, no later ones.
    assert!(response.get("clusterAuthorizedOperations").is_some());
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.last(), Some(&(3, 9)), "{asked:?}");

    // One line with --compact; --version skips negotiation.
    let (address, seen) = fake_broker();
    let out = run(
        &[
            "request",
            "--bootstrap",
            &address,
            "--api",
            "3",
            "--version",
            "4",
            "--compact",
        ],
        "{}",
    )
    .ok();
    assert_eq!(out.lines().count(), 1);
    assert_eq!(seen.lock().unwrap().clone(), [(3, 4)]);
}

#[test]
fn request_errors_are_one_line_with_status_1() {
    let (address, _) = fake_broker();
    let refused = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    };
    let error = run(
        &["request", "--bootstrap", &refused, "--api", "Metadata"],
        "{}",
    )
    .error();
    assert!(
        error.starts_with(&format!("error: cannot connect to {refused}: ")),
        "{error}"
    );

    let args = |api: &'static str| {
        vec![
            "request",
            "--bootstrap",
            &address,
            "--api",
            api,
            "--timeout-ms",
            "300",
        ]
    };
    let error = run(&args("DescribeCluster"), "{}").error();
    assert_eq!(
        error,
        format!("error: no response from {address} within 300 ms")
    );

    let error = run(&args("ListGroups"), "{}").error();
    assert!(
        error.starts_with("error: the ListGroups v5 response does not decode: "),
        "{error}"
    );

    let error = run(&args("FindCoordinator"), "{}").error();
    assert_eq!(
        error,
        format!("error: {address} closed the connection before answering")
    );

    let error = run(&args("Produce"), "{}").error();
    assert_eq!(
        error,
        format!(
            "error: no version of Produce to use with {address}: the broker does not advertise it"
        )
    );

    let error = run(&args("Metadata"), "[1]").error();
    assert_eq!(error, "error: $: expected an object");

    let error = run(&args("Metadata"), "{").error();
    assert!(error.starts_with("error: invalid JSON: "), "{error}");

    let error = run(
        &[
            "request",
            "--bootstrap",
            &address,
            "--api",
            "Metadata",
            "--version",
            "99",
        ],
        "{}",
    )
    .error();
    assert!(
        error.starts_with("error: Metadata has no version 99"),
        "{error}"
    );
}
