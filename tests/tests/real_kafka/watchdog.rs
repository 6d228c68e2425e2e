//! The `--owner` watchdog of `tests/kafka/broker.sh`: a node started for a
//! process keeps running while that process lives, and is stopped, its
//! directory removed, once it ends. A test process that is killed outright
//! (CI's timeout, a developer's Ctrl-C) leaves no JVM behind.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use kafka_wire_test_support::kafka::{pinned_version, Kafka};

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
    let mut owner = Owner(
        Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap_or_else(|e| panic!("sleep: {e}")),
    );
    // When the test ends, the guard stops whatever the watchdog left.
    let Some(kafka) = Kafka::start_owned_by("watchdog", &pinned_version(), &[], owner.0.id())
    else {
        return;
    };
    let dir = kafka.dir();
    let pid = node_pid(dir);

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
