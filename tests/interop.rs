//! The clients of the interop suite (`tests/interop/`): kcat (Debian's, on
//! librdkafka), kafka-python and confluent-kafka (PyPI, in the venv
//! `target/interop/venv`) and kafkajs (npm, in
//! `tests/interop/kafkajs/node_modules`), each driven by a flow script that
//! produces or consumes a spec (`tests/interop/clients/spec.py`), and the
//! steps that run them with a time limit.
//!
//! `bash tests/interop/run.sh --install-only` installs them (once, online).
//! Where one is missing, the tests that need it skip with a message;
//! `KAFKA_WIRE_REQUIRE_INTEROP`, which `.ci/run` sets after installing
//! them, makes that a failure.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::clients::say;
use crate::workspace_root;

/// How long one step (a produce, a consume, a check) may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(120);

/// A client of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// kcat, one process per produced message (`clients/kcat_client.py`).
    Kcat,
    /// kafka-python (`clients/kafka_python_client.py`).
    KafkaPython,
    /// confluent-kafka (`clients/confluent_client.py`).
    ConfluentKafka,
    /// kafkajs (`kafkajs/client.js`).
    Kafkajs,
}

impl Client {
    /// Every client.
    pub const ALL: [Client; 4] = [
        Client::Kcat,
        Client::KafkaPython,
        Client::ConfluentKafka,
        Client::Kafkajs,
    ];

    /// The client's name, as the flow scripts and `spec.py` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Client::Kcat => "kcat",
            Client::KafkaPython => "kafka-python",
            Client::ConfluentKafka => "confluent-kafka",
            Client::Kafkajs => "kafkajs",
        }
    }

    /// The command that runs the client's flow script, or `None` (with a
    /// message, or a failure under `KAFKA_WIRE_REQUIRE_INTEROP`) when the
    /// client is missing here.
    pub fn flow(self) -> Option<Command> {
        let tools = tools();
        let (program, script) = match self {
            Client::Kcat if tools.kcat => (tools.python.as_ref()?, "clients/kcat_client.py"),
            Client::Kcat => return None,
            Client::KafkaPython => (
                tools.kafka_python.as_ref()?,
                "clients/kafka_python_client.py",
            ),
            Client::ConfluentKafka => (tools.confluent.as_ref()?, "clients/confluent_client.py"),
            Client::Kafkajs => (tools.kafkajs.as_ref()?, "kafkajs/client.js"),
        };
        let mut command = Command::new(program);
        command.arg(interop_dir().join(script));
        Some(command)
    }
}

/// `kcat`, or `None` when it does not run here (see [`skip`]).
pub fn kcat() -> Option<Command> {
    tools().kcat.then(|| Command::new("kcat"))
}

/// `tests/interop`.
pub fn interop_dir() -> PathBuf {
    workspace_root().join("tests/interop")
}

/// The Python that runs the suite's scripts (`spec.py`, the kcat driver):
/// the venv's when there is one, else `python3`; `None` when neither runs.
pub fn python() -> Option<&'static Path> {
    tools().python.as_deref()
}

/// Whether `KAFKA_WIRE_REQUIRE_INTEROP` is set (by `.ci/run`, after it
/// installed the clients), which makes a missing client a failure.
pub fn required() -> bool {
    std::env::var_os("KAFKA_WIRE_REQUIRE_INTEROP").is_some()
}

/// Says why `what` skips, or fails under `KAFKA_WIRE_REQUIRE_INTEROP`.
pub fn skip(what: &str, why: &str) {
    assert!(!required(), "KAFKA_WIRE_REQUIRE_INTEROP is set, but {why}");
    say(&format!(
        "skipped {what}: {why}; the interop clients are installed once, online, with \
         `bash tests/interop/run.sh --install-only`"
    ));
}

/// The venv's Python when it can import `module` (`confluent_kafka`,
/// `kafka`), or `None`, having said why (see [`skip`]).
pub fn venv_python(module: &str, what: &str) -> Option<PathBuf> {
    let python = workspace_root().join("target/interop/venv/bin/python");
    if succeeds(Command::new(&python).args(["-c", &format!("import {module}")])) {
        return Some(python);
    }
    skip(
        what,
        &format!("{} cannot import {module}", python.display()),
    );
    None
}

/// What runs here, found once per test binary.
struct Tools {
    python: Option<PathBuf>,
    /// Whether `kcat` runs.
    kcat: bool,
    kafka_python: Option<PathBuf>,
    confluent: Option<PathBuf>,
    /// `node`, when kafkajs and its codecs are installed.
    kafkajs: Option<PathBuf>,
}

fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(find_tools)
}

fn succeeds(command: &mut Command) -> bool {
    command
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success())
}

fn find_tools() -> Tools {
    let venv = workspace_root().join("target/interop/venv/bin/python");
    let python = [venv, PathBuf::from("python3")]
        .into_iter()
        .find(|p| succeeds(Command::new(p).arg("--version")));
    if python.is_none() {
        skip(
            "the interop clients",
            "neither the venv's Python nor `python3` runs",
        );
    }
    let kcat = succeeds(Command::new("kcat").arg("-V"));
    if !kcat {
        skip("kcat", "`kcat -V` does not run");
    }
    let kafka_python = venv_python("kafka", "kafka-python");
    let confluent = venv_python("confluent_kafka", "confluent-kafka");
    let modules = interop_dir().join("kafkajs");
    let kafkajs = if succeeds(
        Command::new("node")
            .current_dir(&modules)
            .args(["-e", "require('kafkajs'); require('kafkajs-snappy'); require('lz4js'); require('@bokuweb/zstd-wasm'); require('fzstd')"]),
    ) {
        Some(PathBuf::from("node"))
    } else {
        skip(
            "kafkajs",
            &format!(
                "`node` cannot load kafkajs and its codecs from {}/node_modules",
                modules.display()
            ),
        );
        None
    };
    Tools {
        python,
        kcat,
        kafka_python,
        confluent,
        kafkajs,
    }
}

/// Runs `command` with its output (both streams) in `log`, killing it
/// after [`STEP_TIMEOUT`]. Returns the output; panics with its tail when
/// the command fails, saying what `what` was.
pub fn step(what: &str, mut command: Command, log: &Path) -> String {
    let out = File::create(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let err = out
        .try_clone()
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {command:?}: {e}"));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < STEP_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Err(e) => panic!("{what}: waiting: {e}"),
        }
    };
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let failed = match status {
        Some(status) if status.success() => return text,
        Some(status) => status.to_string(),
        None => format!("timed out after {STEP_TIMEOUT:?}"),
    };
    let tail: Vec<&str> = text.lines().rev().take(40).collect();
    panic!(
        "{what} failed ({failed}); the last lines of {}:\n{}",
        log.display(),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}
