//! tcpdump capturing loopback traffic for a test, into a pcap file.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `tcpdump --version` runs.
pub fn available() -> bool {
    Command::new("tcpdump")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A running `tcpdump -U -w FILE` on loopback, its standard error in a
/// file. Killed when dropped, also when a test fails.
#[derive(Debug)]
pub struct Tcpdump {
    child: Child,
    stderr: PathBuf,
}

impl Tcpdump {
    /// Starts tcpdump on `lo`, writing to `file` the packets `filter`
    /// selects (tcpdump's expression, word by word), and waits until it
    /// says it listens; `Err` with what it said when it cannot capture
    /// (not root, no such interface).
    pub fn start(file: &Path, stderr: &Path, filter: &[&str]) -> Result<Tcpdump, String> {
        let err = std::fs::File::create(stderr).unwrap_or_else(|e| panic!("{e}"));
        let child = Command::new("tcpdump")
            // -Z root: the file is written without dropping privileges, so
            // that a checkout the tcpdump user cannot reach works too.
            // --immediate-mode: each packet is handed over as it comes
            // (without it, a short test's last packets were still in
            // libpcap's buffer when tcpdump stopped, and lost).
            // -B 65536: a 64 MiB kernel buffer (KiB), so that a busy
            // machine, where tcpdump waits for the CPU, drops nothing (with
            // the default 2 MiB the kernel dropped 3,120 of 27,338 packets
            // while a build ran beside the test).
            .args([
                "-U",
                "--immediate-mode",
                "-B",
                "65536",
                "-n",
                "-Z",
                "root",
                "-i",
                "lo",
                "-s",
                "0",
                "-w",
            ])
            .arg(file)
            .args(filter)
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("tcpdump: {e}"))?;
        let mut tcpdump = Tcpdump {
            child,
            stderr: stderr.to_owned(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let said = std::fs::read_to_string(stderr).unwrap_or_default();
            if said.contains("listening on") {
                return Ok(tcpdump);
            }
            if let Ok(Some(status)) = tcpdump.child.try_wait() {
                return Err(format!("tcpdump exited ({status}): {}", said.trim()));
            }
            if Instant::now() > deadline {
                return Err(format!("tcpdump did not start listening: {}", said.trim()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops it with SIGINT, waits, and returns its report (`N packets
    /// captured`, ...).
    pub fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap_or_else(|e| panic!("kill: {e}"));
        assert!(status.success(), "kill -INT {pid}");
        let status = self.child.wait().unwrap_or_else(|e| panic!("{e}"));
        let report = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        assert!(status.success(), "tcpdump ended with {status}: {report}");
        report
    }
}

impl Drop for Tcpdump {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
