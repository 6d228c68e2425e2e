//! Runs the built `kafka-protocol` binary as a user runs it: arguments,
//! standard input or a file, standard output, standard error, exit status.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use kafka_wire_records::{records_to_json, DecodeOptions, Header, RecordBatchBuilder};
use kafka_wire_test_support::process::run_with_input;
use serde_json::{json, Value};

/// What a run of the binary produced.
struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

impl Run {
    fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout_text()))
    }

    /// Asserts success with nothing on standard error.
    fn ok(self) -> Self {
        assert_eq!(self.code, Some(0), "stderr: {}", self.stderr);
        assert!(self.stderr.is_empty(), "stderr: {}", self.stderr);
        self
    }

    /// Asserts exit status 1, no output, and exactly one `error: ` line on
    /// standard error, which is returned.
    fn bad_input(self) -> String {
        assert_eq!(self.code, Some(1), "stderr: {}", self.stderr);
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout_text());
        assert!(
            self.stderr.starts_with("error: "),
            "stderr: {}",
            self.stderr
        );
        assert!(self.stderr.ends_with('\n'), "stderr: {}", self.stderr);
        assert_eq!(self.stderr.lines().count(), 1, "stderr: {}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "stderr: {}", self.stderr);
        self.stderr.trim_end().to_owned()
    }
}

/// Runs the binary with `args`, feeding `stdin`.
fn run(args: &[&str], stdin: &[u8]) -> Run {
    let output = run_with_input(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .args(args)
            .env("RUST_BACKTRACE", "1"),
        stdin,
    );
    Run {
        code: output.status.code(),
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Writes `contents` to a new file under the test's temporary directory.
fn temp_file(contents: &[u8]) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-{}-{n}.in", std::process::id()));
    std::fs::write(&path, contents).unwrap_or_else(|e| panic!("cannot write {path:?}: {e}"));
    path
}

fn path_arg(path: &std::path::Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("non-UTF-8 temp path {path:?}"))
}

/// A golden fixture file: the api key, request or response, and its cases.
struct Golden {
    api_key: i16,
    direction: &'static str,
    cases: Vec<Value>,
}

fn golden(name: &str) -> Golden {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/golden")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let file: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let api_key = file["apiKey"]
        .as_i64()
        .and_then(|k| i16::try_from(k).ok())
        .unwrap_or_else(|| panic!("{path:?}: no apiKey"));
    let direction = match file["type"].as_str() {
        Some("request") => "--request",
        Some("response") => "--response",
        other => panic!("{path:?}: type {other:?}"),
    };
    let cases = file["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("{path:?}: no cases"))
        .clone();
    Golden {
        api_key,
        direction,
        cases,
    }
}

fn case_hex(case: &Value) -> &str {
    case["hex"]
        .as_str()
        .unwrap_or_else(|| panic!("no hex in {case}"))
}

fn case_version(case: &Value) -> String {
    case["version"].to_string()
}

/// The VoteRequest v2 fixture case with PreVote true in its first partition.
fn pre_vote_case() -> Value {
    golden("VoteRequest")
        .cases
        .into_iter()
        .find(|case| {
            case["version"] == 2 && case["value"]["topics"][0]["partitions"][0]["preVote"] == true
        })
        .unwrap_or_else(|| panic!("no VoteRequest v2 case with preVote true"))
}

/// Request header v2 (Vote v2 is flexible): api key 52, version 2,
/// correlation id 7, client id "x" (int16 length), no tagged fields.
const VOTE_V2_HEADER_HEX: &str = concat!("0034", "0002", "00000007", "0001", "78", "00");

/// The JSON form of that header.
fn vote_v2_header() -> Value {
    json!({"requestApiKey": 52, "requestApiVersion": 2, "correlationId": 7, "clientId": "x"})
}

/// Prefixes a frame with its int32 size.
fn size_prefixed(frame: &[u8]) -> Vec<u8> {
    let size = i32::try_from(frame.len()).unwrap_or_else(|_| panic!("frame too large"));
    let mut out = size.to_be_bytes().to_vec();
    out.extend_from_slice(frame);
    out
}

fn from_hex(text: &str) -> Vec<u8> {
    hex::decode(text).unwrap_or_else(|e| panic!("bad hex in test: {e}"))
}

#[test]
fn golden_cases_decode_and_encode_back() {
    let files = [
        "VoteRequest",
        "VoteResponse",
        "ApiVersionsRequest",
        "ApiVersionsResponse",
        "MetadataRequest",
        "FetchResponse",
    ];
    let mut checked = 0;
    for name in files {
        let golden = golden(name);
        let api = golden.api_key.to_string();
        // Every other case by name, the rest by key; a few through a file.
        for (index, case) in golden.cases.iter().enumerate().step_by(3) {
            let version = case_version(case);
            let api_arg = if index % 2 == 0 {
                name.trim_end_matches("Request")
                    .trim_end_matches("Response")
            } else {
                api.as_str()
            };
            let args = [
                "--api",
                api_arg,
                "--version",
                &version,
                golden.direction,
                "--hex",
            ];
            let hex = case_hex(case);

            let mut decode = vec!["decode"];
            decode.extend(args);
            let decoded = if index % 4 == 0 {
                let file = temp_file(format!("{hex}\n").as_bytes());
                decode.push(path_arg(&file));
                run(&decode, b"").ok()
            } else {
                decode.push("-");
                run(&decode, hex.as_bytes()).ok()
            };
            assert_eq!(decoded.json(), case["value"], "{name} case {index}");
            // Pretty by default.
            let empty = case["value"].as_object().is_some_and(|o| o.is_empty());
            assert!(
                empty || decoded.stdout_text().contains("\n  "),
                "{name} case {index}"
            );

            let mut encode = vec!["encode"];
            encode.extend(args);
            let value = case["value"].to_string();
            let encoded = run(&encode, value.as_bytes()).ok();
            assert_eq!(
                encoded.stdout_text(),
                format!("{hex}\n"),
                "{name} case {index}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} cases");
}

#[test]
fn raw_bytes_and_compact_output() {
    let case = pre_vote_case();
    let bytes = from_hex(case_hex(&case));
    let args = [
        "decode",
        "--api",
        "VOTE",
        "--version",
        "2",
        "--request",
        "--compact",
    ];
    let decoded = run(&args, &bytes).ok();
    assert_eq!(decoded.stdout_text().lines().count(), 1);
    assert_eq!(decoded.json(), case["value"]);

    let json = decoded.stdout_text();
    let encoded = run(
        &["encode", "--api", "52", "--version", "2", "--request"],
        json.as_bytes(),
    )
    .ok();
    assert_eq!(
        encoded.stdout, bytes,
        "raw encode writes the bytes themselves"
    );
}

#[test]
fn a_vote_frame_with_pre_vote_round_trips() {
    let case = pre_vote_case();
    let frame_hex = format!("{VOTE_V2_HEADER_HEX}{}", case_hex(&case));

    let decoded = run(
        &["decode", "--frame", "--request", "--hex"],
        frame_hex.as_bytes(),
    )
    .ok();
    let json = decoded.json();
    assert_eq!(json["header"], vote_v2_header());
    assert_eq!(json["body"], case["value"]);
    assert_eq!(json["body"]["topics"][0]["partitions"][0]["preVote"], true);
    // The header comes first.
    assert!(decoded.stdout_text().find("\"header\"") < decoded.stdout_text().find("\"body\""));

    let encoded = run(
        &["encode", "--frame", "--request", "--hex"],
        &decoded.stdout,
    )
    .ok();
    assert_eq!(encoded.stdout_text(), format!("{frame_hex}\n"));

    // The same frame, built from the JSON form alone.
    let built = json!({"header": vote_v2_header(), "body": case["value"]}).to_string();
    let encoded = run(
        &["encode", "--frame", "--request", "--hex", "-"],
        built.as_bytes(),
    )
    .ok();
    assert_eq!(encoded.stdout_text(), format!("{frame_hex}\n"));
}

#[test]
fn a_response_frame_needs_its_api_and_round_trips() {
    let golden = golden("ApiVersionsResponse");
    let case = golden
        .cases
        .iter()
        .find(|case| case["version"] == 3)
        .unwrap_or_else(|| panic!("no ApiVersionsResponse v3 case"));
    // ApiVersions responses use header v0 even when flexible: just the
    // correlation id.
    let frame_hex = format!("0000002a{}", case_hex(case));
    let args = [
        "--frame",
        "--response",
        "--api",
        "ApiVersions",
        "--version",
        "3",
        "--hex",
    ];
    let decoded = run(&[&["decode"][..], &args].concat(), frame_hex.as_bytes()).ok();
    assert_eq!(
        decoded.json(),
        json!({"header": {"correlationId": 42}, "body": case["value"]})
    );
    let encoded = run(&[&["encode"][..], &args].concat(), &decoded.stdout).ok();
    assert_eq!(encoded.stdout_text(), format!("{frame_hex}\n"));
}

#[test]
fn an_api_versions_fallback_prints_at_the_version_it_was_written_at() {
    // A broker asked for ApiVersions v3, a version it does not support,
    // answers with a v0 body: error 35 (UNSUPPORTED_VERSION) and the
    // versions it has. Its JSON form is v0's, with no v3 field.
    let frame_hex = concat!(
        "0000002a", // correlation id
        "0023",     // error code 35
        "00000001", // one api key
        "0012", "0000", "0004",
    );
    let args = [
        "--frame",
        "--response",
        "--api",
        "ApiVersions",
        "--version",
        "3",
        "--hex",
    ];
    let decoded = run(&[&["decode"][..], &args].concat(), frame_hex.as_bytes()).ok();
    assert_eq!(
        decoded.json(),
        json!({
            "header": {"correlationId": 42},
            "body": {
                "errorCode": 35,
                "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 4}]
            }
        })
    );
}

#[test]
fn a_stream_of_two_frames_prints_two_lines() {
    let vote = from_hex(&format!(
        "{VOTE_V2_HEADER_HEX}{}",
        case_hex(&pre_vote_case())
    ));
    // ApiVersions v3, header v2: key 18, version 3, correlation id 8, null
    // client id, no tags; then two compact strings and no tags.
    let api_versions = from_hex("0012000300000008ffff000261023100");
    let stream = [size_prefixed(&vote), size_prefixed(&api_versions)].concat();

    let decoded = run(&["decode", "--frames", "--request"], &stream).ok();
    let text = decoded.stdout_text();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["header"], vote_v2_header());
    assert_eq!(
        lines[0]["body"]["topics"][0]["partitions"][0]["preVote"],
        true
    );
    assert_eq!(
        lines[1],
        json!({
            "header": {"requestApiKey": 18, "requestApiVersion": 3, "correlationId": 8, "clientId": null},
            "body": {"clientSoftwareName": "a", "clientSoftwareVersion": "1"},
        })
    );

    // `encode --frames` writes the capture back.
    let file = temp_file(text.as_bytes());
    let encoded = run(&["encode", "--frames", "--request", path_arg(&file)], b"").ok();
    assert_eq!(encoded.stdout, stream);

    // A cut-off stream: the complete frame is printed, then one error line
    // naming the frame and the absolute offset.
    let cut = &stream[..stream.len() - 3];
    let decoded = run(&["decode", "--frames", "--request"], cut);
    assert_eq!(decoded.code, Some(1));
    assert_eq!(decoded.stdout_text().lines().count(), 1);
    let second = 4 + vote.len();
    assert_eq!(
        decoded.stderr,
        format!(
            "error: frame 2: size at byte {}: length {} exceeds the {} byte(s) left\n",
            second + 4,
            api_versions.len(),
            api_versions.len() - 3
        )
    );
}

#[test]
fn apis_lists_every_api() {
    let table = run(&["apis"], b"").ok().stdout_text();
    let mut lines = table.lines();
    assert_eq!(
        lines.next(),
        Some("key\tname\tmin\tmax\tflexible\tunstable")
    );
    let rows: Vec<Vec<&str>> = lines.map(|line| line.split('\t').collect()).collect();
    assert!(rows.iter().all(|row| row.len() == 6));
    // Kafka 4.4.0's set: keys 0 to 94, but 4 to 7, removed with ZooKeeper mode.
    let keys: Vec<&str> = rows.iter().map(|row| row[0]).collect();
    let expected: Vec<String> = (0..=94)
        .filter(|key| !(4..=7).contains(key))
        .map(|key: i16| key.to_string())
        .collect();
    assert_eq!(keys, expected);
    let row = |name: &str| {
        rows.iter()
            .find(|row| row[1] == name)
            .map(|r| r.join(" "))
            .unwrap_or_default()
    };
    assert_eq!(row("Vote"), "52 Vote 0 2 0 false");
    assert_eq!(row("InitProducerId"), "22 InitProducerId 0 6 2 true");
    assert_eq!(
        row("StreamsGroupTopologyDescriptionUpdate"),
        "93 StreamsGroupTopologyDescriptionUpdate 0 0 0 false"
    );
    assert_eq!(
        row("UnregisterController"),
        "94 UnregisterController 0 0 0 false"
    );
    assert!(
        rows.iter().any(|row| row[4] == "-"),
        "some API is never flexible"
    );
    let unstable: Vec<&str> = rows
        .iter()
        .filter(|row| row[5] == "true")
        .map(|row| row[1])
        .collect();
    assert_eq!(
        unstable,
        ["InitProducerId"],
        "the APIs whose latest version Kafka 4.4.0 marks unstable"
    );

    let json = run(&["apis", "--json"], b"").ok().json();
    let array = json
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {json}"));
    assert_eq!(array.len(), rows.len());
    let vote = array.iter().find(|api| api["name"] == "Vote");
    assert_eq!(
        vote,
        Some(
            &json!({"key": 52, "name": "Vote", "min": 0, "max": 2, "flexible": 0, "unstable": false})
        )
    );
    let never_flexible = array.iter().find(|api| api["name"] == "SaslHandshake");
    assert_eq!(
        never_flexible.map(|api| &api["flexible"]),
        Some(&Value::Null)
    );
}

/// `records` streams its output, in exactly the text serde_json prints for
/// the whole document; a fault in a later batch still prints nothing but
/// the error line.
#[test]
fn records_streams_the_pinned_text_and_stays_all_or_nothing() {
    let mut blob = Vec::new();
    for base in [0, 10, 20] {
        let mut builder = RecordBatchBuilder::new(base);
        let appended = builder
            .append(5, Some(b"k"), Some(b"v\n\x00"), &[Header::new("h", None)])
            .and_then(|()| builder.append(6, None, Some(&[0xff]), &[]));
        assert!(appended.is_ok(), "{appended:?}");
        blob.extend(builder.build().unwrap_or_else(|e| panic!("{e}")));
    }
    let value = records_to_json(&blob, &DecodeOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let pretty = serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
    let compact = serde_json::to_string(&value).unwrap_or_default() + "\n";
    assert_eq!(run(&["records"], &blob).ok().stdout_text(), pretty);
    assert_eq!(
        run(&["records", "--compact"], &blob).ok().stdout_text(),
        compact
    );

    // The last byte of the last batch flipped: its CRC fails after two good
    // batches, and nothing of them is printed.
    if let Some(last) = blob.last_mut() {
        *last ^= 0xff;
    }
    let error = run(&["records"], &blob).bad_input();
    assert!(error.contains("CRC"), "{error}");
}

#[test]
fn records_decodes_a_batch() {
    let mut builder = RecordBatchBuilder::new(42);
    let appended = builder
        .append(
            1_700_000_000_000,
            Some(b"key"),
            Some(b"value"),
            &[Header::new("h", Some(b"v"))],
        )
        .and_then(|()| builder.append(1_700_000_000_005, None, Some(b"second"), &[]));
    assert!(appended.is_ok(), "{appended:?}");
    let batch = builder.build().unwrap_or_else(|e| panic!("{e}"));

    let raw = run(&["records"], &batch).ok().json();
    let hex = run(
        &["records", "--hex", "--compact"],
        hex::encode(&batch).as_bytes(),
    )
    .ok();
    assert_eq!(hex.stdout_text().lines().count(), 1);
    assert_eq!(hex.json(), raw);

    assert_eq!(raw["partialTail"], Value::Null);
    let batch_json = &raw["batches"][0];
    assert_eq!(batch_json["baseOffset"], 42);
    assert_eq!(batch_json["magic"], 2);
    let records = batch_json["records"].as_array().map(Vec::len);
    assert_eq!(records, Some(2));
    let first = &batch_json["records"][0];
    assert_eq!(first["offset"], 42);
    assert_eq!(first["keyUtf8"], "key");
    assert_eq!(first["valueUtf8"], "value");
    assert_eq!(first["headers"][0]["key"], "h");
    assert_eq!(batch_json["records"][1]["offset"], 43);
    assert_eq!(batch_json["records"][1]["timestamp"], 1_700_000_000_005_i64);

    // A flipped byte in the records breaks the CRC: one error line.
    let mut corrupt = batch.clone();
    if let Some(last) = corrupt.last_mut() {
        *last ^= 0xff;
    }
    let error = run(&["records"], &corrupt).bad_input();
    assert!(error.contains("CRC"), "{error}");
}

#[test]
fn truncated_bytes_name_the_offset_and_field_path() {
    // VoteRequest v0 (flexible): null cluster id, one topic "a", one
    // partition whose replica epoch is cut off after one byte.
    let args = [
        "decode",
        "--api",
        "Vote",
        "--version",
        "0",
        "--request",
        "--hex",
    ];
    let error = run(&args, b"00 02 0261 02 00000000 00").bad_input();
    assert_eq!(
        error,
        "error: VoteRequest.topics[0].partitions[0].replica_epoch at byte 9: \
         truncated: needed 4 more byte(s), 1 left"
    );

    // A truncated fixture: still one line, with the message and an offset.
    let case = pre_vote_case();
    let hex = case_hex(&case);
    let args = [
        "decode",
        "--api",
        "Vote",
        "--version",
        "2",
        "--request",
        "--hex",
    ];
    let error = run(&args, &hex.as_bytes()[..hex.len() / 2]).bad_input();
    assert!(error.starts_with("error: VoteRequest.topics["), "{error}");
    assert!(error.contains(" at byte "), "{error}");

    // In a frame, offsets count from the start of the frame.
    let frame = format!("{VOTE_V2_HEADER_HEX}00ffffffff020261020000000000");
    let error = run(
        &["decode", "--frame", "--request", "--hex"],
        frame.as_bytes(),
    )
    .bad_input();
    assert_eq!(
        error,
        "error: VoteRequest.topics[0].partitions[0].replica_epoch at byte 25: \
         truncated: needed 4 more byte(s), 1 left"
    );
    let error = run(
        &["decode", "--frame", "--request", "--hex"],
        b"7f00 0000 0000 0000",
    )
    .bad_input();
    assert_eq!(
        error,
        "error: RequestHeader.request_api_key at byte 0: unknown api key 32512"
    );

    // Trailing bytes are an error too.
    let args = [
        "decode",
        "--api",
        "Vote",
        "--version",
        "2",
        "--request",
        "--hex",
    ];
    let error = run(&args, format!("{hex}00").as_bytes()).bad_input();
    assert!(error.contains("1 trailing byte(s)"), "{error}");
}

#[test]
fn invalid_hex_is_one_line() {
    let args = [
        "decode",
        "--api",
        "Vote",
        "--version",
        "2",
        "--request",
        "--hex",
    ];
    let error = run(&args, b"00 0g").bad_input();
    assert_eq!(
        error,
        "error: invalid hex: unexpected character 'g' at offset 4"
    );
    let error = run(&args, b"000").bad_input();
    assert!(
        error.starts_with("error: invalid hex: odd number of hex digits"),
        "{error}"
    );
    let error = run(&["records", "--hex"], b"zz").bad_input();
    assert!(error.starts_with("error: invalid hex:"), "{error}");
}

#[test]
fn bad_json_names_the_json_path() {
    let mut value = pre_vote_case()["value"].clone();
    if let Some(partition) = value["topics"][0]["partitions"][0].as_object_mut() {
        partition.remove("replicaId");
    }
    let args = ["encode", "--api", "Vote", "--version", "2", "--request"];
    let error = run(&args, value.to_string().as_bytes()).bad_input();
    assert_eq!(
        error,
        "error: $.topics[0].partitions[0].replicaId: missing field"
    );

    let error = run(&args, br#"{"clusterId": 5, "voterId": 1, "topics": []}"#).bad_input();
    assert!(
        error.starts_with("error: $.clusterId: expected "),
        "{error}"
    );

    let error = run(&args, b"{\"clusterId\": ").bad_input();
    assert!(error.starts_with("error: invalid JSON: "), "{error}");

    // In a frame, the path starts at the frame object.
    let frame = json!({"header": vote_v2_header(), "body": value}).to_string();
    let error = run(&["encode", "--frame", "--request"], frame.as_bytes()).bad_input();
    assert_eq!(
        error,
        "error: $.body.topics[0].partitions[0].replicaId: missing field"
    );
    let frame = json!({"header": {"requestApiKey": 52}, "body": {}}).to_string();
    let error = run(&["encode", "--frame", "--request"], frame.as_bytes()).bad_input();
    assert_eq!(error, "error: $.header.requestApiVersion: missing field");
}

#[test]
fn unknown_apis_versions_and_files_are_bad_input() {
    let error = run(
        &["decode", "--api", "Nope", "--version", "0", "--request"],
        b"",
    )
    .bad_input();
    assert!(error.contains("unknown api `Nope`"), "{error}");
    let error = run(
        &["encode", "--api", "999", "--version", "0", "--response"],
        b"{}",
    )
    .bad_input();
    assert!(error.contains("unknown api `999`"), "{error}");
    let error = run(
        &["decode", "--api", "Vote", "--version", "3", "--request"],
        b"",
    )
    .bad_input();
    assert_eq!(error, "error: Vote has no version 3 (valid: 0-2)");
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.bin");
    let args = ["records", path_arg(&missing)];
    let error = run(&args, b"").bad_input();
    assert!(error.starts_with("error: cannot read "), "{error}");
}

#[test]
fn usage_errors_exit_with_2() {
    let usage = [
        &["decode", "--api", "Vote", "--version", "2"][..],
        &["decode", "--api", "Vote", "--request"],
        &["decode", "--frame", "--response", "--hex"],
        &[
            "decode",
            "--frame",
            "--request",
            "--api",
            "Vote",
            "--version",
            "2",
        ],
        &["decode", "--api", "Vote", "--version", "two", "--request"],
        &["encode", "--frame"],
        &["decode", "--bogus"],
        &["frobnicate"],
        &[],
    ];
    for args in usage {
        let run = run(args, b"");
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
        assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
    }
    let help = run(&["decode", "--help"], b"").ok();
    assert!(help.stdout_text().contains("--frames"));
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    // Thousands of frames, hex-encoded, into a pipe whose reader is gone.
    let frame = json!({"header": vote_v2_header(), "body": pre_vote_case()["value"]}).to_string();
    let input = format!("{frame}\n").repeat(5000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
        .args(["encode", "--frames", "--request", "--hex"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the binary: {e}"));
    drop(child.stdout.take());
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("cannot wait for the binary: {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
}
