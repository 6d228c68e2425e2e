//! How `kafka-protocol fake --control` ends: on SIGTERM while standard
//! input stays open (as every wrapper holds it), and with `--stop-on-eof`
//! when standard input ends (a wrapper closing it, or dying). Each within a
//! bound, with the `faults` line on standard error.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a stop may take: the cluster stops in milliseconds; this is
/// slack for a loaded machine, far below "waits for input forever".
const STOP_BOUND: Duration = Duration::from_secs(5);

/// The fault counts line of a cluster that injected nothing.
const NO_FAULTS: &str = "faults error=0,delay=0,hang=0,drop-before=0,drop-after=0,move-leaders=0,move-coordinator=0,stop-broker=0,restart-broker=0,drop-after-records=0";

/// A running `kafka-protocol fake --brokers 1 --control ...`, with its
/// standard input held open; killed if a test fails before it ends.
struct Fake {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    bootstrap: String,
}

impl Fake {
    fn start(more: &[&str]) -> Fake {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .args(["fake", "--brokers", "1", "--control"])
            .args(more)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("bootstrap line");
        let bootstrap = line
            .trim()
            .strip_prefix("bootstrap ")
            .unwrap_or_else(|| panic!("not a bootstrap line: {line:?}"))
            .to_owned();
        Fake {
            child,
            stdin,
            stdout,
            bootstrap,
        }
    }

    /// Sends a signal by name (`TERM`, `INT`).
    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name}");
    }

    /// Waits at most `bound` for the exit; its status and standard error.
    fn exit_within(&mut self, bound: Duration) -> (Option<i32>, String) {
        let began = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                let mut stderr = String::new();
                if let Some(mut err) = self.child.stderr.take() {
                    err.read_to_string(&mut stderr).expect("stderr");
                }
                return (status.code(), stderr);
            }
            assert!(
                began.elapsed() < bound,
                "kafka-protocol fake is still running {bound:?} after it was told to stop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn sigterm_stops_it_while_standard_input_stays_open() {
    for signal in ["TERM", "INT"] {
        let mut fake = Fake::start(&[]);
        // Standard input stays open (`fake.stdin` is held) and unread.
        fake.signal(signal);
        let (code, stderr) = fake.exit_within(STOP_BOUND);
        assert_eq!(code, Some(0), "SIG{signal}: {stderr}");
        assert!(stderr.contains("shutting down"), "SIG{signal}: {stderr}");
        assert!(
            stderr.lines().any(|l| l == NO_FAULTS),
            "SIG{signal}: {stderr}"
        );
        assert!(fake.stdin.is_some());
    }
}

#[test]
fn with_stop_on_eof_the_end_of_standard_input_stops_it() {
    let mut fake = Fake::start(&["--stop-on-eof", "--fault", "metadata:delay=1ms"]);
    let mut stdin = fake.stdin.take().expect("stdin");
    writeln!(stdin, r#"{{"id": 1, "cmd": "counts"}}"#).expect("write");
    stdin.flush().expect("flush");
    let mut answer = String::new();
    fake.stdout.read_line(&mut answer).expect("answer");
    assert!(answer.contains(r#""ok":true"#), "{answer}");
    drop(stdin);
    let (code, stderr) = fake.exit_within(STOP_BOUND);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("standard input ended"), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("faults error=0,delay=0,")),
        "{stderr}"
    );
}

#[test]
fn without_stop_on_eof_it_runs_on_after_the_end_of_input_until_sigterm() {
    let mut fake = Fake::start(&[]);
    drop(fake.stdin.take());
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        fake.child.try_wait().expect("try_wait").is_none(),
        "stopped at the end of input without --stop-on-eof"
    );
    TcpStream::connect(&fake.bootstrap).expect("still listening");
    fake.signal("TERM");
    let (code, stderr) = fake.exit_within(STOP_BOUND);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.lines().any(|l| l == NO_FAULTS), "{stderr}");
}

#[test]
fn stop_on_eof_needs_control() {
    let output = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
        .args(["fake", "--stop-on-eof"])
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--control"), "{stderr}");
}
