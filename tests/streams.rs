//! The Kafka Streams application of the tests (`tests/streams`, a module of
//! its own): building it offline, running its two steps, killing it in its
//! middle, and what its output must be, computed here on our own from the
//! same workload.
//!
//! Without Java, Maven or Kafka Streams' jars in `~/.m2` it skips with a
//! message, a failure under `KAFKA_WIRE_REQUIRE_JAVA` (which `.ci/run`
//! sets after `mvn -f tests/streams/pom.xml dependency:go-offline`).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kafka_wire_test_support::kafka::{java_program, pom_property, required, runs};
use serde_json::Value;

use crate::{maven_repository, workspace_root};

/// The workload as `tests/streams/.../Workload.java` defines it: keep the
/// two in step.
pub mod workload {
    /// Sentences written.
    pub const SENTENCES: usize = 1200;
    /// Words per sentence.
    pub const WORDS_PER_SENTENCE: usize = 5;
    /// Distinct words.
    pub const VOCABULARY: usize = 40;
    /// Records on the left of the join.
    pub const LEFT: usize = 300;
    /// Records on the right.
    pub const RIGHT: usize = 300;
    /// Join keys.
    pub const KEYS: usize = 20;
    /// The join window, in milliseconds.
    pub const WINDOW_MS: i64 = 5_000;

    /// Input records, all topics together.
    pub const INPUT: u64 = (SENTENCES + LEFT + RIGHT) as u64;

    /// Word `position` of sentence `sentence`.
    pub fn word(sentence: usize, position: usize) -> String {
        format!("w{:02}", (7 * sentence + 13 * position) % VOCABULARY)
    }

    /// How many times each word occurs: its counts must run 1 to that.
    pub fn word_totals() -> std::collections::BTreeMap<String, u64> {
        let mut totals = std::collections::BTreeMap::new();
        for s in 0..SENTENCES {
            for p in 0..WORDS_PER_SENTENCE {
                *totals.entry(word(s, p)).or_insert(0) += 1;
            }
        }
        totals
    }

    /// The joined records, `k<key>:l<i>+r<j>`, sorted.
    pub fn joined() -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..LEFT {
            for j in 0..RIGHT {
                let left_time = 1000 * i as i64;
                let right_time = 1000 * j as i64 + 500;
                let key = i % KEYS;
                if key == (3 * j) % KEYS && (left_time - right_time).abs() <= WINDOW_MS {
                    out.push(format!("k{key}:l{i}+r{j}"));
                }
            }
        }
        out.sort();
        out
    }
}

/// The application, built.
#[derive(Debug)]
pub struct App {
    java: PathBuf,
    classpath: String,
}

fn skip(why: String) -> Option<App> {
    assert!(!required(), "KAFKA_WIRE_REQUIRE_JAVA is set, but {why}");
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {why}; the Streams application needs Java, Maven and Kafka Streams' jars in ~/.m2 \
         (once, online: `mvn -f tests/streams/pom.xml dependency:go-offline`)"
    );
    None
}

/// Builds the application once per test binary (`mvn -o -q compile`), or
/// says why it cannot (then the caller skips).
pub fn app() -> Option<&'static App> {
    static APP: OnceLock<Option<App>> = OnceLock::new();
    APP.get_or_init(build).as_ref()
}

fn build() -> Option<App> {
    let java = java_program();
    if !runs(java.as_os_str(), "-version") {
        return skip(format!("`{}` does not run", java.display()));
    }
    if !runs(OsStr::new("mvn"), "-v") {
        return skip("`mvn` does not run".into());
    }
    let pom = workspace_root().join("tests/streams/pom.xml");
    let text = std::fs::read_to_string(&pom).unwrap_or_else(|e| panic!("{}: {e}", pom.display()));
    let version = text
        .split("<kafka.version>")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_else(|| panic!("{}: no <kafka.version>", pom.display()))
        .trim()
        .to_owned();
    // One pinned Kafka: the application's must be the project's.
    assert_eq!(
        version,
        pom_property("kafka.version"),
        "tests/streams/pom.xml and tests/java/pom.xml pin different Kafka releases"
    );
    let jar = maven_repository().map(|m| {
        m.join(format!(
            "org/apache/kafka/kafka-streams/{version}/kafka-streams-{version}.jar"
        ))
    });
    if !jar.as_ref().is_some_and(|j| j.is_file()) {
        return skip(format!(
            "org.apache.kafka:kafka-streams:{version} is not in ~/.m2"
        ));
    }
    let out = Command::new("mvn")
        .args(["-B", "-o", "-q", "-f"])
        .arg(&pom)
        .arg("compile")
        .output()
        .unwrap_or_else(|e| panic!("mvn: {e}"));
    assert!(
        out.status.success(),
        "`mvn -o -q -f {} compile` failed (run `mvn -f {0} dependency:go-offline` once, online):\n{}{}",
        pom.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let target = workspace_root().join("tests/streams/target");
    let dependencies = std::fs::read_to_string(target.join("classpath.txt"))
        .unwrap_or_else(|e| panic!("tests/streams/target/classpath.txt: {e}"));
    Some(App {
        java,
        classpath: format!(
            "{}:{}",
            target.join("classes").display(),
            dependencies.trim()
        ),
    })
}

/// What one application did: its progress when killed, the records it
/// processed after the restart, and its output.
#[derive(Debug)]
pub struct Outcome {
    /// Input records processed by the first run when it was killed, per
    /// protocol.
    pub killed_at: BTreeMap<String, u64>,
    /// Input records processed after the restart, per protocol.
    pub after_restart: BTreeMap<String, u64>,
    /// The output after the restart (`done` of the application's line).
    pub output: Value,
    /// Seconds of each step: prepare, first run, restart.
    pub seconds: [f64; 3],
}

/// A running JVM, killed (SIGKILL) when dropped, so that a test that
/// panics leaves no application behind.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The input records each application had processed, from a progress line.
fn progress(line: &str) -> Option<BTreeMap<String, u64>> {
    let value: Value = serde_json::from_str(line).ok()?;
    let map = value.get("progress")?.as_object()?;
    Some(
        map.iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
            .collect(),
    )
}

impl App {
    fn command(&self, dir: &Path, log: &str, args: &[&str]) -> Command {
        let mut command = Command::new(&self.java);
        command
            .args(["-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .arg("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
            .arg(format!(
                "-Dorg.slf4j.simpleLogger.logFile={}",
                dir.join(log).display()
            ))
            .arg("-cp")
            .arg(&self.classpath)
            .arg("dev.kafkawire.streams.Main")
            .args(args);
        command
    }

    /// Prepares the input on `bootstrap`, runs both applications, kills
    /// their JVM (SIGKILL) once each has processed `kill_at` input records,
    /// and runs them again until their output is complete. Files go to
    /// `dir`.
    pub fn run_killed_and_restarted(
        &self,
        bootstrap: &str,
        prefix: &str,
        dir: &Path,
        kill_at: u64,
    ) -> Outcome {
        let state = dir.join("state");
        let state = state.to_string_lossy().into_owned();
        let started = Instant::now();
        let out = self
            .command(
                dir,
                "prepare.log",
                &["prepare", "--bootstrap", bootstrap, "--prefix", prefix],
            )
            .output()
            .unwrap_or_else(|e| panic!("java: {e}"));
        assert!(
            out.status.success(),
            "prepare on {bootstrap} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let prepared = started.elapsed().as_secs_f64();

        let started = Instant::now();
        let common = [
            "--bootstrap",
            bootstrap,
            "--prefix",
            prefix,
            "--state-dir",
            &state,
            "--throttle-ms",
            "3",
        ];
        let mut first = Running(
            self.command(
                dir,
                "first.log",
                &[&["run", "--until", "killed"], &common[..]].concat(),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("java: {e}")),
        );
        let stdout = first.0.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut last = BTreeMap::new();
        loop {
            let line = match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(line) => line,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    assert!(Instant::now() < deadline, "the first run on {bootstrap} did not reach {kill_at} records per application in 120 s: {last:?} (logs in {})", dir.display());
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("the first run on {bootstrap} ended before it was killed: {last:?} (logs in {})", dir.display());
                }
            };
            if let Some(p) = progress(&line) {
                last = p;
                if last.len() == 2 && last.values().all(|n| *n >= kill_at) {
                    break;
                }
            }
        }
        // SIGKILL: no close, no leave, transactions left open.
        first.0.kill().unwrap_or_else(|e| panic!("kill: {e}"));
        drop(first);
        let _ = reader.join();
        let killed_at = last;
        let first_seconds = started.elapsed().as_secs_f64();

        let started = Instant::now();
        let out = self
            .command(
                dir,
                "restart.log",
                &[
                    &["run", "--until", "done", "--timeout-s", "150"],
                    &common[..],
                ]
                .concat(),
            )
            .output()
            .unwrap_or_else(|e| panic!("java: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "the restart on {bootstrap} failed (logs in {}):\n{}{}",
            dir.display(),
            stdout.lines().rev().take(3).collect::<Vec<_>>().join("\n"),
            String::from_utf8_lossy(&out.stderr)
        );
        let after_restart = stdout.lines().rev().find_map(progress).unwrap_or_default();
        let done = stdout
            .lines()
            .rfind(|l| l.starts_with("{\"done\""))
            .unwrap_or_else(|| panic!("the restart on {bootstrap} printed no result:\n{stdout}"));
        let done: Value = serde_json::from_str(done).unwrap_or_else(|e| panic!("{e}: {done}"));
        Outcome {
            killed_at,
            after_restart,
            output: done["done"].clone(),
            seconds: [prepared, first_seconds, started.elapsed().as_secs_f64()],
        }
    }
}

/// Checks one application's output against the workload: every word's
/// counts run 1, 2, ... its total, once each, and the join holds exactly
/// the pairs in the window. Returns (word-count records, joined records).
pub fn check_output(target: &str, protocol: &str, output: &Value) -> (u64, u64) {
    let counts = output["counts"]
        .as_object()
        .unwrap_or_else(|| panic!("{target} {protocol}: no counts in {output}"));
    let totals = workload::word_totals();
    let words: Vec<&String> = counts.keys().collect();
    assert_eq!(
        words,
        totals.keys().collect::<Vec<_>>(),
        "{target} {protocol}: the words counted"
    );
    let mut records = 0;
    for (word, total) in &totals {
        let got: Vec<u64> = counts[word]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        let want: Vec<u64> = (1..=*total).collect();
        assert_eq!(
            got, want,
            "{target} {protocol}: the counts of {word}, in output order"
        );
        records += got.len() as u64;
    }
    let joined: Vec<String> = output["joined"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        joined,
        workload::joined(),
        "{target} {protocol}: the joined records"
    );
    (records, joined.len() as u64)
}
