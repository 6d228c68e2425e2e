//! The chaos runs (issue 44, section 3): real clients against a fake
//! cluster of three brokers (kafka-wire-fake, in process) while it injects,
//! all at once and for the whole run, the faults of [`FAULTS`]: leaders
//! moving every 500 ms, 5% of Produce requests answered
//! NOT_LEADER_OR_FOLLOWER, 1% of requests dropping their connection before
//! they are handled and 1% after (the answer lost), delays of 0-50 ms, one
//! broker stopped for a second and a half, and the group (and
//! transaction) coordinators moved twice, all in the first three seconds.
//! The cluster follows Kafka 4.5's first-sequence rule (KAFKA-15591, see
//! [`Chaos::start`]). The faults are the `--fault` specs a user gives `kafka-protocol fake`,
//! applied with [`FakeCluster::apply_fault`]; the counts printed are the
//! cluster's own ([`FakeCluster::fault_counts`]).
//!
//! Each client then has one reader, assigned every partition, read the
//! topic `read_committed` from the start: each record acknowledged must be
//! there exactly once, in order per partition, with no gap.
//!
//! - Kafka's Java clients (`tests/java`, `Chaos.java`): an idempotent
//!   producer (acks=all) sends 200,000 records over 12 partitions while a
//!   group of three read_committed consumers reads them, covering every
//!   offset (a record read twice after a rebalance is a redelivery,
//!   counted, not a failure);
//! - franz-go's kgo (`tests/go`, `chaos.go`): the same;
//! - confluent-kafka (`tests/chaos/confluent_chaos.py`, in the venv of
//!   `tests/interop/requirements.txt`): the same;
//! - Java's exactly-once consume-transform-produce loop over 50,000
//!   records: the output, read `read_committed`, holds each input's result
//!   exactly once;
//! - Java's producer without idempotence, with retries and one request in
//!   flight per connection: its duplicates must be exactly the records of
//!   the Produce requests the cluster handled and then dropped the answer
//!   of (`drop-after-records`), and at least one.
//!
//! Each flow runs once more without faults against real Kafka 4.4.0 (one
//! broker, `tests/kafka/broker.sh`), as a control. Every run prints one
//! line, `chaos <client>: sent S, read R, lost L, duplicated D, redelivered
//! E, faults <kind>=<count>,...`, with `faults none` for the control runs,
//! and its duration.
//!
//! Without Java the Java runs and the controls skip with a message (a
//! failure under `KAFKA_WIRE_REQUIRE_JAVA`); without Go the kgo run (under
//! `KAFKA_WIRE_REQUIRE_GO`); without the venv of the Python clients the
//! confluent-kafka run (under `KAFKA_WIRE_REQUIRE_INTEROP`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use kafka_wire_fake::control::{FaultCounts, FaultKind, FaultSpec};
use kafka_wire_fake::FakeCluster;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::clients::{kgo_flow, say, scratch};
use kafka_wire_tests::interop;
use kafka_wire_tests::java::jvm;
use kafka_wire_tests::workspace_root;
use serde_json::Value;

/// The records of the producer runs.
const RECORDS: u64 = 200_000;
/// The input records of the exactly-once run.
const EOS_RECORDS: u64 = 50_000;
/// The records of the run without idempotence, in small batches so that
/// it sends enough Produce requests for the drop-after fault to bite.
const PLAIN_RECORDS: u64 = 50_000;
const PARTITIONS: u32 = 12;
const CONSUMERS: u32 = 3;
/// The seed of the cluster's random draws.
const SEED: u64 = 44;

/// The faults, as `kafka-protocol fake --fault` takes them. The first
/// request fault that fires on a request is the one applied, so the rare
/// ones come before the delay that every other request gets.
const FAULTS: [&str; 7] = [
    "produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.05",
    "*:drop-before:rate=0.01",
    "*:drop-after:rate=0.01",
    "*:delay=0ms..50ms",
    "every=500ms:move-leaders",
    "every=1500ms:stop-broker:for=1500ms:times=1",
    "every=1s:move-coordinator:times=2",
];

/// A fake cluster of three brokers under [`FAULTS`], on a runtime of its
/// own.
struct Chaos {
    cluster: FakeCluster,
    runtime: tokio::runtime::Runtime,
}

impl Chaos {
    fn start() -> Chaos {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        // Kafka 4.5's first-sequence rule (KAFKA-15591): under Kafka
        // 4.4.0's, a producer whose first batch on a partition meets an
        // injected error while its second is appended retries the first
        // as OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout
        // fails it (the Java producer did, 1 run in 9 here: 35 records of a
        // partition expired after 240 s). That is the broker's defect,
        // not the client's; `a_first_batch_overtaken_by_the_second` in
        // the fake's tests shows both rules.
        let mut builder = FakeCluster::builder()
            .brokers(3)
            .first_sequence_from_zero(true);
        if let Some(path) = std::env::var_os("CHAOS_CAPTURE") {
            builder = builder.capture(path);
        }
        let cluster = runtime
            .block_on(builder.start())
            .unwrap_or_else(|e| panic!("the fake: {e}"));
        Chaos { cluster, runtime }
    }

    /// Applies every fault, from now on.
    fn unleash(&self) {
        self.cluster.seed(SEED);
        let _entered = self.runtime.enter();
        for spec in FAULTS {
            let fault = FaultSpec::parse(spec).unwrap_or_else(|e| panic!("{e}"));
            self.cluster
                .apply_fault(&fault)
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
        }
    }
}

/// Where a run is: the fake under faults, or real Kafka as a control.
enum Target<'a> {
    Chaos(&'a Chaos),
    Kafka(&'a str),
}

impl Target<'_> {
    fn bootstrap(&self) -> String {
        match self {
            Target::Chaos(chaos) => chaos.cluster.bootstrap(),
            Target::Kafka(bootstrap) => (*bootstrap).to_owned(),
        }
    }

    fn tag(&self) -> &'static str {
        match self {
            Target::Chaos(_) => "chaos",
            Target::Kafka(_) => "control",
        }
    }
}

/// What one run found, as its client reported it.
struct Outcome {
    report: Value,
    faults: Option<FaultCounts>,
}

impl Outcome {
    fn get(&self, key: &str) -> u64 {
        self.report[key]
            .as_u64()
            .unwrap_or_else(|| panic!("no {key} in {}", self.report))
    }

    /// The run's line: `chaos <client>: sent S, read R, ...`.
    fn line(&self, client: &str) -> String {
        let faults = self
            .faults
            .as_ref()
            .map_or_else(|| "faults none".to_owned(), ToString::to_string);
        format!(
            "chaos {client}: sent {}, read {}, lost {}, duplicated {}, redelivered {}, {faults}",
            self.get("sent"),
            self.get("read"),
            self.get("lost"),
            self.get("duplicated"),
            self.get("redelivered"),
        )
    }
}

/// Runs a client program against `target` and returns the JSON object it
/// printed last; its standard error goes to
/// `target/tmp/real-clients/chaos-TARGET-CLIENT/client.err`, whose tail a
/// failure shows.
fn execute(client: &str, target: &Target<'_>, mut command: Command) -> Value {
    let dir = scratch(&format!(
        "chaos-{}-{}",
        target.tag(),
        client.replace(' ', "-")
    ));
    let err_path = dir.join("client.err");
    let err = std::fs::File::create(&err_path).unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let out = command
        .stdin(Stdio::null())
        .stderr(err)
        .output()
        .unwrap_or_else(|e| panic!("{client}: {e}"));
    let seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let faults = match target {
            Target::Chaos(chaos) => chaos.cluster.fault_counts().to_string(),
            Target::Kafka(_) => "faults none".to_owned(),
        };
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
        panic!(
            "{client} against {} failed ({}) after {seconds:.1} s, {faults}:\n{stdout}{}",
            target.tag(),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{client} printed {last:?}: {e}"))
}

/// [`execute`], then the run's line and its duration, with the faults the
/// cluster counted.
fn run(client: &str, target: &Target<'_>, command: Command) -> Outcome {
    let started = Instant::now();
    let report = execute(client, target, command);
    let seconds = started.elapsed().as_secs_f64();
    let faults = match target {
        Target::Chaos(chaos) => Some(chaos.cluster.fault_counts()),
        Target::Kafka(_) => None,
    };
    let outcome = Outcome { report, faults };
    let name = match target {
        Target::Chaos(_) => client.to_owned(),
        Target::Kafka(_) => format!("{client} (control, Kafka {})", pinned_version()),
    };
    say(&outcome.line(&name));
    say(&format!(
        "time of {name}: {seconds:.1} s; report {}",
        outcome.report
    ));
    outcome
}

/// The checks of every run whose producer is idempotent (or
/// transactional): everything acknowledged read back once, in order,
/// where it was sent; the group covered every offset.
fn check_exactly_once(outcome: &Outcome, sent: u64) {
    let report = &outcome.report;
    assert_eq!(outcome.get("sent"), sent, "{report}");
    for key in [
        "lost",
        "duplicated",
        "outOfOrder",
        "misplaced",
        "unacknowledged",
        "groupMissing",
    ] {
        assert_eq!(outcome.get(key), 0, "{key}: {report}");
    }
    assert_eq!(outcome.get("read"), sent, "{report}");
}

/// The faults really fired, as the cluster counted them: every cluster
/// fault as scheduled, the delays, and the request faults drawn at rare
/// rates (errors, drops) at least once in all. A short run may miss one
/// kind of those; its line shows which fired.
fn check_faults(outcome: &Outcome) {
    let Some(counts) = &outcome.faults else {
        return;
    };
    assert!(counts.get(FaultKind::Delay) > 0, "{counts}");
    assert!(counts.get(FaultKind::MoveLeaders) > 0, "{counts}");
    assert_eq!(counts.get(FaultKind::StopBroker), 1, "{counts}");
    assert_eq!(counts.get(FaultKind::MoveCoordinator), 2, "{counts}");
    let rare = [
        FaultKind::Error,
        FaultKind::DropBefore,
        FaultKind::DropAfter,
    ];
    assert!(
        rare.iter().map(|k| counts.get(*k)).sum::<u64>() > 0,
        "{counts}"
    );
}

/// Real Kafka for the control runs, started once for the test binary
/// (the script's watchdog stops it when the process ends), or `None`
/// (skipped, see the module).
fn kafka() -> Option<&'static str> {
    static KAFKA: OnceLock<Option<(Kafka, String)>> = OnceLock::new();
    KAFKA
        .get_or_init(|| {
            let kafka = Kafka::start("chaos-control", &pinned_version(), &[])?;
            let bootstrap = kafka.get("bootstrap").to_owned();
            Some((kafka, bootstrap))
        })
        .as_ref()
        .map(|(_, bootstrap)| bootstrap.as_str())
}

/// A fresh fake under faults for one run, then the control run against
/// Kafka; `command` builds the client's command for a bootstrap and a
/// name prefix (topic, group, client ids), which differs per run.
fn chaos_and_control(
    client: &str,
    command: impl Fn(&str, &str) -> Command,
    check: impl Fn(&Outcome),
) {
    chaos_and_control_after(client, None, command, check);
}

/// A command for a bootstrap and a name prefix.
type Build<'a> = &'a dyn Fn(&str, &str) -> Command;

/// [`chaos_and_control`], with `setup` run first on each target, before
/// the faults start; it must report `sent` as `sent`.
fn chaos_and_control_after(
    client: &str,
    setup: Option<(Build<'_>, u64)>,
    command: impl Fn(&str, &str) -> Command,
    check: impl Fn(&Outcome),
) {
    let setup_on = |target: &Target<'_>, prefix: &str| {
        if let Some((setup, sent)) = setup {
            let started = Instant::now();
            let report = execute(client, target, setup(&target.bootstrap(), prefix));
            say(&format!(
                "time of {client} setup ({}): {:.1} s; report {report}",
                target.tag(),
                started.elapsed().as_secs_f64()
            ));
            assert_eq!(report["sent"], sent, "{report}");
        }
    };
    let chaos = Chaos::start();
    let target = Target::Chaos(&chaos);
    let prefix = format!("chaos-{}", client.replace(' ', "-"));
    setup_on(&target, &prefix);
    chaos.unleash();
    let outcome = run(client, &target, command(&target.bootstrap(), &prefix));
    check(&outcome);
    drop(chaos);
    if let Some(bootstrap) = kafka() {
        let target = Target::Kafka(bootstrap);
        let prefix = format!("control-{}", client.replace(' ', "-"));
        setup_on(&target, &prefix);
        let outcome = run(client, &target, command(bootstrap, &prefix));
        check(&outcome);
    }
}

/// The Java chaos program in `mode` for `records` records.
fn java(mode: &str, records: u64, more: &[&str]) -> Option<impl Fn(&str, &str) -> Command> {
    let jvm = jvm()?;
    let more: Vec<String> = more.iter().map(|s| (*s).to_owned()).collect();
    let mode = mode.to_owned();
    Some(move |bootstrap: &str, prefix: &str| {
        let mut command = jvm.command("dev.kafkawire.clients.Chaos");
        command
            .args(["--bootstrap", bootstrap, "--mode", &mode])
            .args(["--topic", &format!("{prefix}-topic")])
            .args(["--group", &format!("{prefix}-group")])
            .args(["--client-prefix", prefix])
            .args(["--records", &records.to_string()])
            .args(["--partitions", &PARTITIONS.to_string()])
            .args(["--consumers", &CONSUMERS.to_string()])
            .args(&more);
        command
    })
}

#[test]
fn java_idempotent_producer_and_group_lose_nothing() {
    let _one = one_at_a_time();
    let Some(command) = java("idempotent", RECORDS, &[]) else {
        return;
    };
    chaos_and_control("java", command, |outcome| {
        check_exactly_once(outcome, RECORDS);
        check_faults(outcome);
    });
}

#[test]
fn java_producer_without_idempotence_duplicates_exactly_the_dropped_answers() {
    let _one = one_at_a_time();
    let Some(command) = java("plain", PLAIN_RECORDS, &["--batch-size", "512"]) else {
        return;
    };
    chaos_and_control("java non-idempotent", command, |outcome| {
        let report = &outcome.report;
        assert_eq!(outcome.get("sent"), PLAIN_RECORDS, "{report}");
        for key in ["lost", "outOfOrder", "misplaced", "unacknowledged"] {
            assert_eq!(outcome.get(key), 0, "{key}: {report}");
        }
        let duplicated = outcome.get("duplicated");
        assert_eq!(outcome.get("read"), PLAIN_RECORDS + duplicated, "{report}");
        match &outcome.faults {
            Some(counts) => {
                check_faults(outcome);
                assert!(duplicated >= 1, "no duplicate: {report}, {counts}");
                assert_eq!(
                    duplicated, counts.dropped_answer_records,
                    "{report}, {counts}"
                );
            }
            None => assert_eq!(duplicated, 0, "{report}"),
        }
    });
}

#[test]
fn java_exactly_once_transform_loses_and_duplicates_nothing() {
    let _one = one_at_a_time();
    let (Some(input), Some(command)) = (
        java("eos-input", EOS_RECORDS, &[]),
        java("eos", EOS_RECORDS, &[]),
    ) else {
        return;
    };
    // The input is written before the faults start: they are for the
    // transactional loop.
    let setup = Some((&input as Build<'_>, EOS_RECORDS));
    chaos_and_control_after("java eos", setup, command, |outcome| {
        check_exactly_once(outcome, EOS_RECORDS);
        check_faults(outcome);
    });
}

#[test]
fn kgo_idempotent_producer_and_group_lose_nothing() {
    let _one = one_at_a_time();
    let Some(binary) = kgo_flow() else {
        return;
    };
    let command = |bootstrap: &str, prefix: &str| {
        let mut command = Command::new(binary);
        command
            .args(["-mode", "chaos", "-timeout", "300s", "-brokers", bootstrap])
            .args(["-topic", &format!("{prefix}-topic")])
            .args(["-group", &format!("{prefix}-group")])
            .args(["-client-prefix", prefix])
            .args(["-records", &RECORDS.to_string()])
            .args(["-partitions", &PARTITIONS.to_string()])
            .args(["-consumers", &CONSUMERS.to_string()]);
        command
    };
    chaos_and_control("kgo", command, |outcome| {
        check_exactly_once(outcome, RECORDS);
        check_faults(outcome);
    });
}

/// The venv's Python with confluent-kafka (`bash tests/interop/run.sh
/// --install-only` makes it), or `None` (skip).
fn confluent_python() -> Option<PathBuf> {
    interop::venv_python("confluent_kafka", "the confluent-kafka chaos run")
}

#[test]
fn confluent_kafka_idempotent_producer_and_group_lose_nothing() {
    let _one = one_at_a_time();
    let Some(python) = confluent_python() else {
        return;
    };
    let script: &Path = &workspace_root().join("tests/chaos/confluent_chaos.py");
    let command = |bootstrap: &str, prefix: &str| {
        let mut command = Command::new(&python);
        command
            .arg(script)
            .args(["--bootstrap", bootstrap])
            .args(["--topic", &format!("{prefix}-topic")])
            .args(["--group", &format!("{prefix}-group")])
            .args(["--client-prefix", prefix])
            .args(["--records", &RECORDS.to_string()])
            .args(["--partitions", &PARTITIONS.to_string()])
            .args(["--consumers", &CONSUMERS.to_string()]);
        command
    };
    chaos_and_control("confluent-kafka", command, |outcome| {
        check_exactly_once(outcome, RECORDS);
        check_faults(outcome);
    });
}
