//! Real Apache Kafka for the tests, through `tests/kafka/broker.sh`: a
//! guard that starts a node (or a quorum), gives its addresses, and stops
//! it and removes its directory when dropped, also when the test panics.
//! The script's `--owner` watchdog stops it even when the test process is
//! killed outright.
//!
//! Where Java, Maven or the broker's jars in `~/.m2` are missing,
//! [`Kafka::start`] prints why and returns `None`, and the test skips;
//! with `KAFKA_WIRE_REQUIRE_JAVA` set (as `.ci/run` sets it) that is a
//! failure instead.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// The workspace root.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The script.
pub fn script() -> PathBuf {
    workspace_root().join("tests/kafka/broker.sh")
}

/// A property of `tests/java/pom.xml`, such as `kafka.version` (the pinned
/// release) or `broker.old.version` (the older broker of the sweep).
pub fn pom_property(name: &str) -> String {
    let pom = workspace_root().join("tests/java/pom.xml");
    let text = std::fs::read_to_string(&pom).unwrap_or_else(|e| panic!("{}: {e}", pom.display()));
    let open = format!("<{name}>");
    let start = text
        .find(&open)
        .map(|i| i + open.len())
        .unwrap_or_else(|| panic!("{}: no <{name}>", pom.display()));
    let end = text[start..]
        .find('<')
        .unwrap_or_else(|| panic!("{}: <{name}> is not closed", pom.display()));
    text[start..start + end].trim().to_owned()
}

/// The release the tests pin (`kafka.version`).
pub fn pinned_version() -> String {
    pom_property("kafka.version")
}

/// Whether `KAFKA_WIRE_REQUIRE_JAVA` is set, which makes a missing Java,
/// Maven or jar a failure rather than a skip.
pub fn required() -> bool {
    std::env::var_os("KAFKA_WIRE_REQUIRE_JAVA").is_some()
}

/// True when `program arg` runs and succeeds (`java -version`, `mvn -v`).
pub fn runs(program: &OsStr, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The `java` to run: `$JAVA_HOME/bin/java` when there is one, else the
/// one on the path.
pub fn java_program() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if Path::new(&home).join("bin/java").is_file() => {
            Path::new(&home).join("bin/java")
        }
        _ => PathBuf::from("java"),
    }
}

/// Why real Kafka `version` cannot run here, if it cannot: no `java`, no
/// `mvn`, or the broker's class path cannot be resolved from `~/.m2`
/// offline.
pub fn missing(version: &str) -> Option<String> {
    if !runs(java_program().as_os_str(), "-version") {
        return Some("`java` does not run".into());
    }
    if !runs(OsStr::new("mvn"), "-v") {
        return Some("`mvn` does not run".into());
    }
    // The broker's whole class path, resolved offline (and cached by the
    // script): any jar missing from ~/.m2 shows here.
    let out = Command::new("bash")
        .arg(script())
        .args(["classpath", version])
        .output();
    match out {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let line = stderr.lines().rfind(|l| l.starts_with("error: "));
            return Some(
                line.map_or(&*stderr, |l| l.trim_start_matches("error: "))
                    .trim()
                    .to_owned(),
            );
        }
        Err(e) => return Some(format!("bash {}: {e}", script().display())),
    }
    None
}

/// Says why a test skips (past the test harness's capture, so that it
/// shows in a passing run), or fails when skipping is not allowed.
pub fn skip(test: &str, why: &str) {
    assert!(!required(), "KAFKA_WIRE_REQUIRE_JAVA is set, but {why}");
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: {why}; the real-Kafka tests need Java, Maven and the broker's jars in ~/.m2"
    );
}

/// One JVM at a time: the nodes of the tests in one test binary start one
/// after the other (two cores are shared by everything).
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running node or quorum, started by `broker.sh start`.
#[derive(Debug)]
pub struct Kafka {
    dir: PathBuf,
    env: BTreeMap<String, String>,
}

impl Kafka {
    /// Starts real Kafka `version` under a fresh directory named after
    /// `name`, with the script's start `options` (`--controllers 3`,
    /// `--brokers 2`, `--feature share.version=1`, ...), or skips (see the
    /// module).
    /// A start that fails for another reason panics with the script's
    /// output.
    pub fn start(name: &str, version: &str, options: &[&str]) -> Option<Kafka> {
        Self::start_owned_by(name, version, options, std::process::id())
    }

    /// [`Kafka::start`] with process `owner` in the test's place: the
    /// script's watchdog stops the nodes once that process ends.
    pub fn start_owned_by(
        name: &str,
        version: &str,
        options: &[&str],
        owner: u32,
    ) -> Option<Kafka> {
        if let Some(why) = missing(version) {
            skip(name, &why);
            return None;
        }
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kafka-wire-{name}-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let started = Instant::now();
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .args(["--version", version, "--owner"])
            .arg(owner.to_string())
            .args(options)
            .output()
            .unwrap_or_else(|e| panic!("bash {}: {e}", script().display()));
        assert!(
            out.status.success(),
            "broker.sh start {name} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let env = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let _ = writeln!(
            std::io::stderr(),
            "{name}: Kafka {version} started in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        Some(Kafka { dir, env })
    }

    /// A value the script printed, such as `bootstrap` or
    /// `node.1.controller`.
    pub fn get(&self, key: &str) -> &str {
        self.env
            .get(key)
            .unwrap_or_else(|| panic!("broker.sh printed no {key}: {:?}", self.env))
    }

    /// A combined node's client listener.
    pub fn bootstrap(&self) -> &str {
        self.get("bootstrap")
    }

    /// A combined node's controller listener.
    pub fn controller(&self) -> &str {
        self.get("controller")
    }

    /// The cluster id storage was formatted with.
    pub fn cluster_id(&self) -> &str {
        self.get("cluster_id")
    }

    /// The directory everything is in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn script(&self, args: &[&str]) {
        let out = Command::new("bash")
            .arg(script())
            .arg(args[0])
            .arg(&self.dir)
            .args(&args[1..])
            .output()
            .unwrap_or_else(|e| panic!("bash {}: {e}", script().display()));
        assert!(
            out.status.success(),
            "broker.sh {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Stops node `id` (SIGTERM, a clean shutdown) and waits for it.
    pub fn stop_node(&self, id: u32) {
        self.script(&["stop-node", &id.to_string()]);
    }

    /// Kills node `id` (SIGKILL, as a crash) and waits for it.
    pub fn kill_node(&self, id: u32) {
        self.script(&["stop-node", &id.to_string(), "--kill"]);
    }

    /// Starts node `id` again on its data; returns once it answers.
    pub fn start_node(&self, id: u32) {
        self.script(&["start-node", &id.to_string()]);
    }

    /// Freezes node `id`'s proxy (SIGSTOP): nothing reaches that
    /// controller until [`resume_proxy`](Self::resume_proxy), while what it
    /// sends still goes out.
    pub fn pause_proxy(&self, id: u32) {
        self.script(&["pause-proxy", &id.to_string()]);
    }

    /// Thaws node `id`'s proxy.
    pub fn resume_proxy(&self, id: u32) {
        self.script(&["resume-proxy", &id.to_string()]);
    }

    /// The last `lines` lines of each node's server.log, for a failure.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut text = String::new();
        let logs = self.env.iter().filter(|(k, _)| k.ends_with(".log"));
        for (key, path) in logs {
            let log = std::fs::read_to_string(path).unwrap_or_default();
            let all: Vec<&str> = log.lines().filter(|l| !l.starts_with('\t')).collect();
            text.push_str(&format!("--- {key} ({path}):\n"));
            for line in &all[all.len().saturating_sub(lines)..] {
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }
}

/// Stops everything and removes the directory; after a panic, first
/// prints the logs' last lines.
impl Drop for Kafka {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = writeln!(std::io::stderr(), "{}", self.log_tails(40));
        }
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}
