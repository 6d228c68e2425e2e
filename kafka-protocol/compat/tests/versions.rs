//! Kafka 4.4.0 (the reference, `kafka.version`) against Kafka 4.0.0 (the
//! candidate, `broker.old.version` of `tests/java/pom.xml`), one broker of
//! each: the surface and the sweep. Every difference must be a documented
//! change between the two releases, listed with its KIP or reason in
//! `versions.expected` beside this file (the allow file's grammar), and
//! every entry of that list must appear: a change the sweep no longer
//! finds fails the test as much as a difference the list lacks.
//!
//! Skips with a message without Java, Maven or the brokers' jars in
//! `~/.m2`, unless `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::io::Write as _;
use std::time::Instant;

use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::report::text;
use kafka_wire_compat::AllowList;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, pom_property, Kafka};

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn kafka_4_0_differs_from_4_4_only_by_documented_changes() {
    let _one = one_at_a_time();
    let (new, old) = (pinned_version(), pom_property("broker.old.version"));
    let (reference, candidate) = std::thread::scope(|scope| {
        let reference = scope.spawn(|| Kafka::start("compat-versions-new", &new, &[]));
        let candidate = scope.spawn(|| Kafka::start("compat-versions-old", &old, &[]));
        let join = |handle: std::thread::ScopedJoinHandle<'_, Option<Kafka>>| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        };
        (join(reference), join(candidate))
    });
    let (Some(reference), Some(candidate)) = (reference, candidate) else {
        return;
    };
    let mut config = Config::new(reference.bootstrap(), candidate.bootstrap());
    config.scenarios = Vec::new();
    config.allow = AllowList::parse(include_str!("versions.expected"))
        .unwrap_or_else(|e| panic!("versions.expected: {e}"));
    let engine = Engine::new(config, Instant::now(), unix_ms());
    let report = run_blocking(engine, &DriverConfig::default(), |_| {})
        .unwrap_or_else(|e| panic!("a runtime: {e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    say(&format!(
        "compat: Kafka {new} against Kafka {old}: {}",
        text::summary(&report)
    ));
    let mut shown = Vec::new();
    let _ = text::write(&report, &mut shown);
    let shown = String::from_utf8_lossy(&shown);
    if std::env::var_os("KAFKA_WIRE_SHOW_REPORT").is_some() {
        say(&shown);
    }
    assert_eq!(
        report.remaining(),
        0,
        "differences versions.expected does not list:\n{shown}"
    );
    assert!(
        report.unused_allow.is_empty(),
        "changes versions.expected lists that the run did not find: {:?}",
        report.unused_allow
    );
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    drop((reference, candidate));
}
