//! kafka-wire-proxy's configuration facts (`src/configs.tsv`) and its
//! redaction rule against Kafka 4.4.0's own code, run on the broker's class
//! path: the names and types are what Kafka's jars hold, and for every name
//! Kafka knows, under every resource type, with listener and mechanism
//! prefixes and names no one knows, `config_value_hidden` says what
//! `AbstractKafkaConfig.loggableValue` does.
//!
//! Skips without Java, Maven or the broker's jars in ~/.m2, unless
//! `KAFKA_WIRE_REQUIRE_JAVA` is set.
#![cfg(feature = "json")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use kafka_wire_proxy::redact::config_value_hidden;
use kafka_wire_test_support::kafka::{java_program, missing, pinned_version, script, skip};

/// The facts program, run with `mode` on Kafka's class path, fed `input`.
fn facts(classpath: &str, mode: &str, input: &str) -> String {
    let program =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/java/facts/ConfigFacts.java");
    let mut child = Command::new(java_program())
        .args(["-cp", classpath])
        .arg(&program)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("java: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "ConfigFacts {mode}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn config_facts_and_redaction_agree_with_kafka() {
    let version = pinned_version();
    if let Some(why) = missing(&version) {
        skip("config_facts", &why);
        return;
    }
    let out = Command::new("bash")
        .arg(script())
        .args(["classpath", &version])
        .output()
        .unwrap();
    let classpath = String::from_utf8(out.stdout).unwrap().trim().to_owned();

    let shipped: Vec<&str> = include_str!("../src/configs.tsv")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .collect();
    let dumped = facts(&classpath, "dump", "");
    assert_eq!(
        shipped,
        dumped.lines().collect::<Vec<_>>(),
        "src/configs.tsv differs from Kafka {version}'s jars: write it again with ConfigFacts.java dump"
    );

    let mut names: Vec<String> = shipped
        .iter()
        .filter_map(|line| line.split('\t').nth(1).map(str::to_owned))
        .collect();
    for base in names.clone() {
        names.push(format!("listener.name.internal.{base}"));
        names.push(format!("listener.name.internal.scram-sha-256.{base}"));
        names.push(format!("listener.name..{base}"));
        names.push(format!("plain.{base}"));
        names.push(format!("{base}.extra"));
    }
    names.extend(["", "no.such.config", "listener.name.", "listener.name.x"].map(String::from));
    let mut queries = String::new();
    let mut asked = Vec::new();
    for resource_type in [0i8, 2, 4, 8, 16, 32, 64] {
        for name in &names {
            queries.push_str(&format!("{resource_type}\t{name}\n"));
            asked.push((resource_type, name));
        }
    }
    let answers = facts(&classpath, "loggable", &queries);
    let answers: Vec<&str> = answers.lines().collect();
    assert_eq!(answers.len(), asked.len());
    let mut differ = Vec::new();
    for ((resource_type, name), answer) in asked.iter().zip(&answers) {
        let ours = if config_value_hidden(*resource_type, name) {
            "hidden"
        } else {
            "shown"
        };
        if ours != *answer {
            differ.push(format!(
                "{resource_type} {name}: kafka {answer}, ours {ours}"
            ));
        }
    }
    println!(
        "config redaction: {} cases; differ {}",
        asked.len(),
        differ.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
