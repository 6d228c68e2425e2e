//! The command line against real Apache Kafka (started by
//! `tests/kafka/broker.sh`): `versions` and `request` on a combined node's
//! client and controller listeners. Skips without Java, Maven or the
//! broker's jars in ~/.m2, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::process::Command;

use kafka_wire::ApiKey;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use serde_json::Value;

/// Runs the binary; returns standard output, panicking unless it exits 0
/// with nothing on standard error.
fn kafka_protocol(args: &[&str], stdin: &str) -> String {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "kafka-protocol {args:?}: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

fn request(address: &str, api: &str, body: &str) -> Value {
    let out = kafka_protocol(&["request", "--bootstrap", address, "--api", api], body);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `versions` on one listener: the table and the JSON agree, every api the
/// broker advertises is known, and `chosen` is the top of the overlap.
fn check_versions(address: &str) -> usize {
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

#[test]
fn versions_and_request_against_a_real_broker() {
    let _one = one_at_a_time();
    let Some(kafka) = Kafka::start("cli", &pinned_version(), &[]) else {
        return;
    };
    let client_apis = check_versions(kafka.bootstrap());
    let controller_apis = check_versions(kafka.controller());
    assert!(
        client_apis > 50 && controller_apis > 20,
        "{client_apis} {controller_apis}"
    );

    let created = request(
        kafka.bootstrap(),
        "CreateTopics",
        r#"{"topics": [{"name": "cli-topic", "numPartitions": 2, "replicationFactor": 1,
                        "assignments": [], "configs": []}]}"#,
    );
    assert_eq!(created["topics"][0]["name"], "cli-topic");
    assert_eq!(created["topics"][0]["errorCode"], 0, "{created}");
    assert_eq!(created["topics"][0]["numPartitions"], 2);

    let metadata = request(kafka.bootstrap(), "Metadata", r#"{"topics": null}"#);
    let port: i64 = kafka
        .bootstrap()
        .rsplit_once(':')
        .unwrap()
        .1
        .parse()
        .unwrap();
    assert_eq!(metadata["brokers"][0]["port"], port, "{metadata}");
    assert_eq!(metadata["clusterId"], kafka.cluster_id());
    let topics = metadata["topics"].as_array().unwrap();
    assert!(
        topics.iter().any(|t| t["name"] == "cli-topic"),
        "{metadata}"
    );

    // DescribeQuorum on the controller listener, by key.
    let key = ApiKey::DescribeQuorum.key().to_string();
    let quorum = request(
        kafka.controller(),
        &key,
        r#"{"topics": [{"topicName": "__cluster_metadata", "partitions": [{"partitionIndex": 0}]}]}"#,
    );
    let partition = &quorum["topics"][0]["partitions"][0];
    assert_eq!(partition["leaderId"], 1, "{quorum}");
    assert_eq!(partition["currentVoters"][0]["replicaId"], 1, "{quorum}");
}
