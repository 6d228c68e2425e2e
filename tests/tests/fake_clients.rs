//! The same real-client flows against real Kafka 4.4.0 and against
//! kafka-wire-fake (in process, `--brokers 1` and `--brokers 3`): what
//! passes against one must pass against the other (issue 43, stage 2).
//!
//! - Kafka's Java clients (`tests/java`, `Flow`): the admin client, an
//!   idempotent producer with acks=all, a consumer in a group, classic and
//!   KIP-848's (`--group-protocol consumer`); the transactional
//!   consume-transform-produce loop
//!   read back `read_committed`, where the aborted transaction's records
//!   must not appear (`--mode transactions`, `Transactions.java`).
//! - franz-go's kgo (`tests/go`): produce and a group consumer, classic and
//!   KIP-848's (`-group-protocol consumer`); the transactional session in
//!   a KIP-848 group (`-mode txn`, `txn.go`).
//!
//! - The Java admin client (`--mode admin`, `AdminFlow.java`): topics
//!   created, described and deleted, configs described and altered,
//!   a group's offsets altered, listed and deleted, the group listed,
//!   described and deleted, records deleted; what it saw must be the same
//!   against every target.
//! - The Java share consumer (`--mode share`, `ShareFlow.java`): the
//!   group's `share.auto.offset.reset` set on the GROUP resource, every
//!   record delivered once in order per partition, except one released and
//!   delivered again with a delivery count of 2.
//! - Over SASL (the fake with users, every listener requiring it; Kafka's
//!   SASL_PLAINTEXT listener of `broker.sh --sasl`): the Java basic flow
//!   with SCRAM-SHA-256, kgo's with PLAIN.
//!
//! Every flow checks that exactly what was produced comes back, in order
//! per partition, with keys, values and headers (the transactional flows
//! timestamps too), and reports its counts, which this test holds against
//! the records written.
//!
//! Without Java (or the broker's jars) the Java flows and real Kafka skip
//! with a message, a failure under `KAFKA_WIRE_REQUIRE_JAVA`; without Go
//! the kgo flows skip, a failure under `KAFKA_WIRE_REQUIRE_GO`.

use kafka_wire_fake::{FakeCluster, SaslMechanism};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::clients::{run_java_with, say};
use kafka_wire_tests::java::{jvm, Jvm};
use serde_json::Value;

const RECORDS: u64 = 20;
const USER: &str = "alice";
const PASSWORD: &str = "alice-secret-4f9d";
/// The records of the transaction that aborts (`Transactions.java`,
/// `txn.go`): three on each of two partitions.
const ABORTED: u64 = 6;

/// A fake cluster on a runtime of its own, which runs it while the client
/// processes do their flows.
struct Fake {
    cluster: FakeCluster,
    _runtime: tokio::runtime::Runtime,
}

/// A fake of `brokers` brokers; with `sasl`, every listener requires it
/// (the user with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512).
fn fake(brokers: usize, sasl: bool) -> Fake {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let mut builder = FakeCluster::builder().brokers(brokers);
    if sasl {
        for mechanism in [
            SaslMechanism::Plain,
            SaslMechanism::ScramSha256,
            SaslMechanism::ScramSha512,
        ] {
            builder = builder.sasl_user(mechanism, USER, PASSWORD);
        }
    }
    let cluster = runtime
        .block_on(builder.start())
        .unwrap_or_else(|e| panic!("the fake with {brokers} brokers: {e}"));
    Fake {
        cluster,
        _runtime: runtime,
    }
}

/// The counts a flow reported, as numbers.
fn count(outcome: &Value, key: &str) -> u64 {
    outcome[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {outcome}"))
}

/// The basic flow: every record produced, consumed and committed, and the
/// brokers advertised those of the cluster.
fn check_basic(outcome: &Value, advertised: &[String]) -> u64 {
    for key in ["produced", "consumed", "committed"] {
        assert_eq!(count(outcome, key), RECORDS, "{key}: {outcome}");
    }
    let mut want = advertised.to_vec();
    want.sort();
    assert_eq!(outcome["advertised"], serde_json::json!(want), "{outcome}");
    if let Some(leaders) = outcome["leaders"].as_array() {
        for leader in leaders {
            assert!(
                want.iter().any(|a| leader == a),
                "leader {leader} not advertised: {outcome}"
            );
        }
    }
    count(outcome, "consumed")
}

/// The transactional flow: every record transformed in committed
/// transactions and read back committed, the aborted ones only
/// uncommitted, and the group's offsets at the input's end.
fn check_transactions(outcome: &Value) -> u64 {
    for key in ["produced", "transformed", "consumed", "committed"] {
        assert_eq!(count(outcome, key), RECORDS, "{key}: {outcome}");
    }
    assert_eq!(count(outcome, "aborted"), ABORTED, "{outcome}");
    assert_eq!(
        count(outcome, "uncommitted"),
        RECORDS + ABORTED,
        "{outcome}"
    );
    let transactions = count(outcome, "transactions");
    assert!(transactions >= 1, "{outcome}");
    // The Java flow describes the transactional id afterwards: complete,
    // its epoch bumped by every commit and the abort (KIP-890 part 2),
    // and the output partition's producer at one of those epochs, with no
    // transaction open.
    if outcome.get("txnState").is_some() {
        assert_eq!(outcome["txnState"], "CompleteCommit", "{outcome}");
        assert_eq!(outcome["listed"], "CompleteCommit", "{outcome}");
        assert_eq!(count(outcome, "txnEpoch"), transactions + 1, "{outcome}");
        let producer_epoch = count(outcome, "producerEpoch");
        assert!(
            (1..=transactions + 1).contains(&producer_epoch),
            "{outcome}"
        );
        assert_eq!(outcome["openSince"], -1, "{outcome}");
    }
    count(outcome, "consumed")
}

fn java(jvm: &Jvm, bootstrap: &str, prefix: &str, more: &[&str]) -> Value {
    run_java_with(jvm, bootstrap, prefix, RECORDS as usize, None, more)
}

fn kgo(binary: &std::path::Path, brokers: &str, prefix: &str, more: &[&str]) -> Value {
    let mut command = std::process::Command::new(binary);
    command
        .args(["-brokers", brokers, "-client-prefix", prefix])
        .args(more)
        .args(["-topic", &format!("{prefix}-topic")])
        .args(["-group", &format!("{prefix}-group")])
        .args(["-records", &RECORDS.to_string()]);
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("kgo flow {prefix}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kgo flow {prefix} against {brokers} failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("kgo flow {prefix} printed {last:?}: {e}"))
}

/// Runs every flow against one target; returns (flow, records checked),
/// and what the admin and share flows saw.
fn flows(target: &str, bootstrap: &str, advertised: &[String]) -> (Vec<(String, u64)>, Value) {
    let mut checked = Vec::new();
    let mut seen = Value::Null;
    let tag = target.replace(' ', "-");
    if let Some(jvm) = jvm() {
        let prefix = format!("java-admin-{tag}");
        let admin = java(jvm, bootstrap, &prefix, &["--mode", "admin"]);
        let prefix = format!("java-share-{tag}");
        let share = java(jvm, bootstrap, &prefix, &["--mode", "share"]);
        for key in ["produced", "consumed"] {
            assert_eq!(count(&share, key), RECORDS, "{key}: {share}");
        }
        assert_eq!(count(&share, "redelivered"), 1, "{share}");
        assert_eq!(count(&share, "redeliveryCount"), 2, "{share}");
        checked.push(("java share consumer".into(), count(&share, "consumed")));
        seen = serde_json::json!({"admin": admin, "share": share});
        let prefix = format!("java-{tag}");
        let outcome = java(jvm, bootstrap, &prefix, &[]);
        checked.push((
            "java classic group".into(),
            check_basic(&outcome, advertised),
        ));
        let prefix = format!("java-848-{tag}");
        let outcome = java(jvm, bootstrap, &prefix, &["--group-protocol", "consumer"]);
        checked.push((
            "java consumer group".into(),
            check_basic(&outcome, advertised),
        ));
        let prefix = format!("java-txn-{tag}");
        let outcome = java(jvm, bootstrap, &prefix, &["--mode", "transactions"]);
        checked.push(("java transactions".into(), check_transactions(&outcome)));
    }
    if let Some(binary) = kafka_wire_tests::clients::kgo_flow() {
        let prefix = format!("kgo-{tag}");
        let outcome = kgo(binary, bootstrap, &prefix, &["-group-protocol", "classic"]);
        checked.push((
            "kgo classic group".into(),
            check_basic(&outcome, advertised),
        ));
        let prefix = format!("kgo-848-{tag}");
        let outcome = kgo(binary, bootstrap, &prefix, &["-group-protocol", "consumer"]);
        checked.push((
            "kgo consumer group".into(),
            check_basic(&outcome, advertised),
        ));
        // The transactional session in a KIP-848 group: its offsets carry
        // the member epoch.
        let prefix = format!("kgo-txn-{tag}");
        let more = ["-mode", "txn", "-group-protocol", "consumer"];
        let outcome = kgo(binary, bootstrap, &prefix, &more);
        checked.push(("kgo transactions".into(), check_transactions(&outcome)));
    }
    say(&format!("{target}: records checked per flow: {checked:?}"));
    (checked, seen)
}

/// The basic flows over SASL: Java with SCRAM-SHA-256, kgo with PLAIN.
fn sasl_flows(target: &str, bootstrap: &str, advertised: &[String]) -> Vec<(String, u64)> {
    let mut checked = Vec::new();
    let tag = target.replace(' ', "-");
    if let Some(jvm) = jvm() {
        let prefix = format!("java-sasl-{tag}");
        let sasl = Some(("SCRAM-SHA-256", USER, PASSWORD));
        let outcome = run_java_with(jvm, bootstrap, &prefix, RECORDS as usize, sasl, &[]);
        checked.push((
            "java SCRAM-SHA-256".into(),
            check_basic(&outcome, advertised),
        ));
    }
    if let Some(binary) = kafka_wire_tests::clients::kgo_flow() {
        let prefix = format!("kgo-sasl-{tag}");
        let more = [
            "-sasl-mechanism",
            "PLAIN",
            "-sasl-user",
            USER,
            "-sasl-password",
            PASSWORD,
        ];
        let outcome = kgo(binary, bootstrap, &prefix, &more);
        checked.push(("kgo PLAIN".into(), check_basic(&outcome, advertised)));
    }
    say(&format!(
        "{target} over SASL: records checked per flow: {checked:?}"
    ));
    checked
}

fn addresses(fake: &Fake) -> Vec<String> {
    fake.cluster
        .addresses()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_client_flows_pass_against_kafka_and_against_the_fake() {
    let _one = one_at_a_time();
    let mut results = Vec::new();
    let mut admin = Vec::new();
    for brokers in [1, 3] {
        let fake = fake(brokers, false);
        let target = format!("fake {brokers}");
        let (checked, seen) = flows(&target, &fake.cluster.bootstrap(), &addresses(&fake));
        results.push((target.clone(), checked));
        admin.push((target, seen));
    }
    let fake = fake(1, true);
    let checked = sasl_flows("fake 1", &fake.cluster.bootstrap(), &addresses(&fake));
    results.push(("fake 1 SASL".into(), checked));
    drop(fake);
    let credentials = format!("{USER}:{PASSWORD}");
    if let Some(kafka) = Kafka::start("fake-parity", &pinned_version(), &["--sasl", &credentials]) {
        let bootstrap = kafka.get("bootstrap").to_owned();
        let (checked, seen) = flows("kafka", &bootstrap, std::slice::from_ref(&bootstrap));
        results.push(("kafka".into(), checked));
        admin.push(("kafka".into(), seen));
        let sasl = kafka.get("sasl_bootstrap").to_owned();
        let checked = sasl_flows("kafka", &sasl, std::slice::from_ref(&sasl));
        results.push(("kafka SASL".into(), checked));
    }
    // The admin client saw the same everywhere: configs and their
    // sources, offsets, groups, low watermarks.
    for (target, seen) in &admin {
        assert_eq!(
            *seen, admin[0].1,
            "the admin flow against {target} and {}",
            admin[0].0
        );
    }
    // The same flows ran everywhere they could.
    let names = |i: usize| -> Vec<&String> { results[i].1.iter().map(|(f, _)| f).collect() };
    let (plain, sasl): (Vec<usize>, Vec<usize>) =
        (0..results.len()).partition(|i| !results[*i].0.ends_with("SASL"));
    for group in [plain, sasl] {
        for i in &group {
            assert_eq!(names(group[0]), names(*i), "{results:?}");
        }
    }
}
