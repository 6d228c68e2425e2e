//! Kafka against Kafka, the proof of the normalization rules (the surface,
//! the sweep and every scenario): two Kafka
//! clusters of the pinned release, one of one broker and one of three
//! (started at once by `tests/kafka/broker.sh`), compared both ways, and
//! each against itself (two runs on the same brokers), report no
//! difference. Whatever differs between any two brokers (ids, epochs,
//! ports, node ids, cluster ids, times, the cluster's size) must be
//! normalized, and nothing else may be.
//!
//! Skips with a message without Java, Maven or the broker's jars in
//! `~/.m2`, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::io::Write as _;
use std::time::{Duration, Instant};

use kafka_wire_compat::case::Area;
use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::report::{text, Report};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};

/// Prints a line past the test harness's capture, so that it shows in a
/// passing run (and in CI's log).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn compare(reference: &str, candidate: &str) -> Report {
    let mut config = Config::new(reference, candidate);
    // Clusters just started take seconds to load their coordinators (the
    // share coordinator's partitions last): room for a slow machine, at no
    // cost where they are quick, since a step waits only until its answer
    // is final.
    config.timeout = Duration::from_secs(30);
    let engine = Engine::new(config, Instant::now(), unix_ms());
    run_blocking(engine, &DriverConfig::default(), |_| {})
        .unwrap_or_else(|e| panic!("a runtime: {e}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn kafka_against_kafka_reports_no_difference() {
    let _one = one_at_a_time();
    let version = pinned_version();
    // Both clusters at once: a JVM's start is most of the test's time.
    let started = Instant::now();
    let (one, three) = std::thread::scope(|scope| {
        let one = scope.spawn(|| Kafka::start("compat-one", &version, &[]));
        let three = scope.spawn(|| Kafka::start("compat-three", &version, &["--brokers", "3"]));
        let join = |handle: std::thread::ScopedJoinHandle<'_, Option<Kafka>>| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        (join(one), join(three))
    });
    let (Some(one), Some(three)) = (one, three) else {
        return;
    };
    say(&format!(
        "compat: Kafka {version}, one broker and three, started in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    let runs = [
        (
            "one broker against three",
            one.bootstrap(),
            three.bootstrap(),
        ),
        (
            "three brokers against one",
            three.bootstrap(),
            one.bootstrap(),
        ),
        (
            "one broker against itself",
            one.bootstrap(),
            one.bootstrap(),
        ),
        (
            "three brokers against themselves",
            three.bootstrap(),
            three.bootstrap(),
        ),
    ];
    for (name, reference, candidate) in runs {
        let report = compare(reference, candidate);
        let areas = report.by_area();
        let count = |area| areas.get(&area).map_or(0, |c| c.cases);
        say(&format!(
            "compat: Kafka {version}, {name}: {}",
            text::summary(&report)
        ));
        let mut shown = Vec::new();
        let _ = text::write(&report, &mut shown);
        assert!(
            report.remaining() == 0 && report.notes.is_empty(),
            "{name}:\n{}",
            String::from_utf8_lossy(&shown)
        );
        // Every api and version is compared: Kafka 4.4.0 advertises 77
        // apis and 282 versions on a broker's listener, each swept with
        // two bodies but for the Produce versions kafka-wire lacks.
        assert!(count(Area::Surface) >= 77, "{name}: {areas:?}");
        assert!(count(Area::Sweep) >= 2 * 270, "{name}: {areas:?}");
        // Every scenario case runs, but for the few that need two brokers
        // on both sides.
        assert!(count(Area::Scenario) >= 340, "{name}: {areas:?}");
    }
    drop((one, three));
}
