//! The `--owner` watchdog of `tests/kafka/broker.sh`: a node started for a
//! process keeps running while that process lives, and is stopped, its
//! directory removed, once it ends. A test process that is killed outright
//! (CI's timeout, a developer's Ctrl-C) leaves no JVM behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use kafka_wire_test_support::kafka::{missing, pinned_version, script, skip};

/// Stops whatever is left in the directory when the test ends, whatever
/// the watchdog did.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.0)
            .output();
    }
}

/// The owner: a process of its own, so that the test can end it.
struct Owner(Child);

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn node_pid(dir: &Path) -> String {
    let file = dir.join("node-1/pid");
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .to_owned()
}

fn alive(pid: &str) -> bool {
    Command::new("kill")
        .args(["-0", pid])
        .output()
        .is_ok_and(|out| out.status.success())
}

pub fn run() {
    let version = pinned_version();
    if let Some(why) = missing(&version) {
        skip("watchdog", &why);
        return;
    }
    let dir = std::env::temp_dir().join(format!("kafka-wire-watchdog-{}", std::process::id()));
    let _cleanup = Cleanup(dir.clone());
    let mut owner = Owner(
        Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap_or_else(|e| panic!("sleep: {e}")),
    );
    let out = Command::new("bash")
        .arg(script())
        .arg("start")
        .arg(&dir)
        .args(["--version", &version, "--owner"])
        .arg(owner.0.id().to_string())
        .output()
        .unwrap_or_else(|e| panic!("bash {}: {e}", script().display()));
    assert!(
        out.status.success(),
        "broker.sh start failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let pid = node_pid(&dir);

    // While the owner lives, the node runs: the watchdog must not take the
    // start for the owner's end.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        alive(&pid) && dir.join("env").is_file(),
        "the node (pid {pid}) was stopped while its owner was alive"
    );

    // The owner ends: within its one-second polls and a clean shutdown, the
    // watchdog stops the node and removes the directory.
    let _ = owner.0.kill();
    let _ = owner.0.wait();
    let ended = Instant::now();
    while (dir.exists() || alive(&pid)) && ended.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        !alive(&pid),
        "the node (pid {pid}) still runs {:.0} s after its owner ended",
        ended.elapsed().as_secs_f64()
    );
    assert!(
        !dir.exists(),
        "{} is still there {:.0} s after its owner ended",
        dir.display(),
        ended.elapsed().as_secs_f64()
    );
    say!(
        "broker.sh watchdog: the node ran while its owner lived and was stopped, its directory \
         removed, {:.1} s after the owner ended",
        ended.elapsed().as_secs_f64()
    );
}
