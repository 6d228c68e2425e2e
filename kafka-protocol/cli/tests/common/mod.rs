//! What the command line's tests against a broker share: running the
//! binary, and checking `versions` on one listener.

use std::process::Command;

use kafka_wire_test_support::process::run_with_input;
use serde_json::Value;

/// Runs the binary; returns standard output, panicking unless it exits 0
/// with nothing on standard error.
pub fn kafka_protocol(args: &[&str], stdin: &str) -> String {
    try_kafka_protocol(args, stdin)
        .unwrap_or_else(|stderr| panic!("kafka-protocol {args:?}: {stderr}"))
}

/// Runs the binary; its standard output if it exits 0 with nothing on
/// standard error, else what it wrote there.
pub fn try_kafka_protocol(args: &[&str], stdin: &str) -> Result<String, String> {
    let out = run_with_input(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol")).args(args),
        stdin.as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.is_empty() {
        return Err(format!("{} ({})", stderr.trim_end(), out.status));
    }
    Ok(String::from_utf8(out.stdout).unwrap())
}

/// `request`: `body` sent as `api` to `address`, the answer's JSON form.
pub fn request(address: &str, api: &str, body: &str) -> Value {
    let out = kafka_protocol(&["request", "--bootstrap", address, "--api", api], body);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `versions` on one listener: the table and the JSON agree, every api the
/// broker advertises is known, and `chosen` is the top of the overlap.
pub fn check_versions(address: &str) -> usize {
    let table = kafka_protocol(&["versions", "--bootstrap", address], "");
    let json: Value = serde_json::from_str(&kafka_protocol(
        &["versions", "--bootstrap", address, "--json"],
        "",
    ))
    .unwrap();
    let rows = json.as_array().unwrap();
    let lines: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(lines.len(), rows.len());
    let mut advertised = 0;
    for (line, row) in lines.iter().zip(rows) {
        let cell = |key: &str| match &row[key] {
            Value::Null => "-".to_owned(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let keys = [
            "key",
            "name",
            "broker_min",
            "broker_max",
            "ours_min",
            "ours_max",
            "chosen",
        ];
        let expected: Vec<String> = keys.iter().map(|k| cell(k)).collect();
        assert_eq!(line.split('\t').collect::<Vec<_>>(), expected);
        if row["broker_max"].is_null() {
            continue;
        }
        advertised += 1;
        assert!(
            !row["name"].is_null(),
            "{address} advertises an unknown api: {row}"
        );
        let top = row["broker_max"].as_i64().min(row["ours_max"].as_i64());
        assert_eq!(row["chosen"].as_i64(), top, "{row}");
    }
    advertised
}
