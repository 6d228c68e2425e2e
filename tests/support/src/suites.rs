//! Outside client suites run against the fake cluster through
//! `tests/suites/run.sh`, held to the list of their tests that passed
//! against Kafka 4.4.0 (`tests/suites/SUITE/kafka.tsv`, written by
//! `run.sh SUITE kafka --record`).
//!
//! A suite whose install step has not run (its script exits 77) skips
//! with a message, unless `KAFKA_WIRE_REQUIRE_SUITES` is set (as `.ci/run`
//! sets it), which makes that a failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The exit status of a suite script whose install step has not run.
const NOT_INSTALLED: i32 = 77;

/// The workspace root.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A test's outcome in an outcome file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The test passed.
    Passed,
    /// The test failed.
    Failed,
    /// The suite skipped the test, or it could not run here.
    Skipped,
}

/// One run of a suite: each test's outcome and the reason given with it.
#[derive(Debug, Default)]
pub struct Outcomes {
    /// By test name.
    pub tests: BTreeMap<String, (Outcome, String)>,
}

impl Outcomes {
    /// Reads an outcome file: `NAME<TAB>passed|failed|skipped<TAB>WHY` per
    /// line. Panics, naming the line, on anything else.
    pub fn parse(path: &Path) -> Outcomes {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut outcomes = Outcomes::default();
        for (number, line) in text.lines().enumerate() {
            if line.is_empty() {
                continue;
            }
            let mut fields = line.splitn(3, '\t');
            let name = fields.next().unwrap_or_default();
            let outcome = match fields.next() {
                Some("passed") => Outcome::Passed,
                Some("failed") => Outcome::Failed,
                Some("skipped") => Outcome::Skipped,
                other => panic!(
                    "{}:{}: outcome {other:?} is not passed, failed or skipped",
                    path.display(),
                    number + 1
                ),
            };
            let why = fields.next().unwrap_or_default().to_owned();
            outcomes.tests.insert(name.to_owned(), (outcome, why));
        }
        outcomes
    }

    /// How many tests had `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.tests.values().filter(|(o, _)| *o == outcome).count()
    }
}

/// The tests of `suite` that passed against Kafka, as recorded in
/// `tests/suites/SUITE/kafka.tsv` (one name per line, `#` comments), and
/// the file's first comment, which says when and against which release.
pub fn recorded(suite: &str) -> (Vec<String>, String) {
    let path = workspace_root().join(format!("tests/suites/{suite}/kafka.tsv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (record it with `tests/suites/run.sh {suite} kafka --record`)",
            path.display()
        )
    });
    let provenance = text
        .lines()
        .find_map(|line| line.strip_prefix("# "))
        .unwrap_or("no provenance line")
        .to_owned();
    let names = text
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    (names, provenance)
}

/// Runs `suite` against `kafka-protocol fake` (the binary `kafka_protocol`)
/// with `options` (such as `["--brokers", "3"]`), and requires every test
/// that passed against Kafka to pass. Prints the run's summary line, its
/// time, and each test that differs. Returns `None` when the suite is not
/// installed and that is allowed (a skip).
pub fn check_against_fake(
    suite: &str,
    kafka_protocol: &Path,
    options: &[&str],
) -> Option<Outcomes> {
    let started = Instant::now();
    let label: String = std::iter::once(suite)
        .chain(options.iter().copied())
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let tsv = workspace_root().join(format!("target/suites/{label}-fake.tsv"));
    let output = Command::new("bash")
        .arg(workspace_root().join("tests/suites/run.sh"))
        .arg(suite)
        .arg("fake")
        .args(options)
        .env("KAFKA_PROTOCOL", kafka_protocol)
        .env("SUITE_TSV", &tsv)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tests/suites/run.sh: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(NOT_INSTALLED) {
        let why = format!(
            "{suite} is not installed (`tests/suites/run.sh {suite} --install-only`): {}",
            stderr.trim()
        );
        assert!(
            std::env::var_os("KAFKA_WIRE_REQUIRE_SUITES").is_none(),
            "KAFKA_WIRE_REQUIRE_SUITES is set, but {why}"
        );
        eprintln!("skipped: {why}");
        return None;
    }
    assert!(
        output.status.success(),
        "tests/suites/run.sh {suite} fake {options:?} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    let outcomes = Outcomes::parse(&tsv);
    let (passed_on_kafka, provenance) = recorded(suite);
    let mut differ = Vec::new();
    for test in &passed_on_kafka {
        match outcomes.tests.get(test) {
            Some((Outcome::Passed, _)) => {}
            Some((outcome, why)) => differ.push(format!("{test}: {outcome:?} ({why})")),
            None => differ.push(format!("{test}: did not run")),
        }
    }
    println!(
        "{} (options {options:?}; {} passed against Kafka: {provenance}) in {:.0} s",
        stdout.trim(),
        passed_on_kafka.len(),
        started.elapsed().as_secs_f64()
    );
    for (test, (outcome, why)) in &outcomes.tests {
        if *outcome != Outcome::Passed && !passed_on_kafka.contains(test) {
            println!("  not required ({outcome:?} against the fake, not passed against Kafka): {test} {why}");
        }
    }
    assert!(
        differ.is_empty(),
        "{suite} {options:?}: {} tests passed against Kafka and not against the fake:\n{}",
        differ.len(),
        differ.join("\n")
    );
    Some(outcomes)
}
