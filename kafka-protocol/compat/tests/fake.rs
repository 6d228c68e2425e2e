//! Our fake cluster against Kafka: `kafka-wire-fake` of one broker and of
//! three, each compared with a Kafka cluster of the pinned release of the
//! same size (the surface, the sweep and every scenario). The differences
//! the fake is allowed, each with its reason, are in `fake.allow` beside
//! this file; every other difference fails the test and is printed.
//!
//! Skips with a message without Java, Maven or the broker's jars in
//! `~/.m2`, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::io::Write as _;
use std::time::Instant;

use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::report::{text, Report};
use kafka_wire_compat::AllowList;
use kafka_wire_fake::FakeCluster;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};

/// Prints a line past the test harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn compare(reference: &str, candidate: &str) -> Report {
    let mut config = Config::new(reference, candidate);
    config.allow =
        AllowList::parse(include_str!("fake.allow")).unwrap_or_else(|e| panic!("fake.allow: {e}"));
    let engine = Engine::new(config, Instant::now(), unix_ms());
    run_blocking(engine, &DriverConfig::default(), |_| {})
        .unwrap_or_else(|e| panic!("a runtime: {e}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_fake_differs_from_kafka_only_where_allowed() {
    let _one = one_at_a_time();
    let version = pinned_version();
    let (one, three) = std::thread::scope(|scope| {
        let one = scope.spawn(|| Kafka::start("compat-fake-one", &version, &[]));
        let three =
            scope.spawn(|| Kafka::start("compat-fake-three", &version, &["--brokers", "3"]));
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
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let fakes = runtime.block_on(async {
        let one = FakeCluster::builder().brokers(1).start().await;
        let three = FakeCluster::builder().brokers(3).start().await;
        (one, three)
    });
    let fake_one = fakes
        .0
        .unwrap_or_else(|e| panic!("the fake of one broker: {e}"));
    let fake_three = fakes
        .1
        .unwrap_or_else(|e| panic!("the fake of three brokers: {e}"));
    let first = |cluster: &FakeCluster| {
        let bootstrap = cluster.bootstrap();
        bootstrap.split(',').next().unwrap_or_default().to_owned()
    };
    let runs = [
        ("one broker", one.bootstrap().to_owned(), first(&fake_one)),
        (
            "three brokers",
            three.bootstrap().to_owned(),
            first(&fake_three),
        ),
    ];
    let mut failed = Vec::new();
    for (name, reference, candidate) in &runs {
        // The engine's driver has a runtime of its own: run it off this
        // one's thread.
        let report = std::thread::scope(|scope| {
            scope
                .spawn(|| compare(reference, candidate))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        say(&format!(
            "compat: the fake against Kafka {version}, {name}: {}",
            text::summary(&report)
        ));
        if report.remaining() > 0 {
            let mut shown = Vec::new();
            let _ = text::write(&report, &mut shown);
            failed.push(format!("{name}:\n{}", String::from_utf8_lossy(&shown)));
        }
    }
    runtime.block_on(async {
        fake_one.shutdown().await.ok();
        fake_three.shutdown().await.ok();
    });
    drop((one, three));
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
