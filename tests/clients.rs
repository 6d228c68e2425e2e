//! Real clients against kafka-wire's programs: the processes the tests
//! start (`kafka-protocol fake`, `kafka-protocol proxy`), the client flows they run
//! (Kafka's Java clients, `dev.kafkawire.clients.Flow` in `tests/java/`,
//! and franz-go's kgo, `tests/go/`), and the checks of a proxy's log.
//!
//! The flows skip with a message where Java, Maven, Go or their modules
//! are missing; `KAFKA_WIRE_REQUIRE_JAVA` (Java, Maven, the jars in
//! `~/.m2`) and `KAFKA_WIRE_REQUIRE_GO` (Go, and franz-go in the module
//! cache), both set by `.ci/run`, make that a failure.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kafka_wire::ApiKey;
use serde_json::Value;

use crate::workspace_root;

/// Says why something skips, past the test harness's capture so that it
/// shows in a passing run.
pub fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// A fresh directory for one test's files, `target/tmp/real-clients/NAME`
/// (each caller names its own); the logs stay there after the run, for
/// reading, and the next run replaces them.
pub fn scratch(name: &str) -> PathBuf {
    let dir = workspace_root().join("target/tmp/real-clients").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A program cargo built in this profile (`target/<profile>/...`, beside
/// this test's `deps/`), such as `kafka-protocol`. `cargo test --workspace`
/// builds it before any test runs.
pub fn built(relative: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current exe: {e}"));
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} has no profile directory", exe.display()));
    let path = profile.join(format!("{relative}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: build it first with `cargo build -p kafka-wire-cli`",
        path.display()
    );
    path
}

pub use kafka_wire_test_support::process::Listening;

/// A fake cluster of one broker (`kafka-protocol fake --brokers 1`) on a
/// free port of 127.0.0.1.
pub fn fake_broker(dir: &Path) -> Listening {
    fake_cluster(dir, 1, &[])
}

/// `kafka-protocol fake --brokers N`, with more options, on free ports of
/// 127.0.0.1; its address is the bootstrap line (every broker, joined by
/// commas), its standard error goes to `DIR/fake-N.err`.
pub fn fake_cluster(dir: &Path, brokers: usize, more: &[&std::ffi::OsStr]) -> Listening {
    let mut command = Command::new(built("kafka-protocol"));
    command
        .args(["fake", "--brokers", &brokers.to_string()])
        .args(more);
    Listening::start(&mut command, &dir.join(format!("fake-{brokers}.err")))
}

/// `kafka-protocol proxy` on a free port of 127.0.0.1 in front of
/// `upstream`, logging to `DIR/NAME.log`.
pub fn proxy(dir: &Path, name: &str, upstream: &str) -> (Listening, PathBuf) {
    let log = dir.join(format!("{name}.log"));
    let mut command = Command::new(built("kafka-protocol"));
    command
        .args([
            "proxy",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            upstream,
            "--log",
        ])
        .arg(&log);
    (
        Listening::start(&mut command, &dir.join(format!("{name}.err"))),
        log,
    )
}

// ---------------------------------------------------------------------------
// The flows.

/// Whether `KAFKA_WIRE_REQUIRE_GO` is set, which makes a missing Go or
/// franz-go a failure rather than a skip.
pub fn go_required() -> bool {
    std::env::var_os("KAFKA_WIRE_REQUIRE_GO").is_some()
}

fn go_skip(why: String) -> Option<PathBuf> {
    assert!(!go_required(), "KAFKA_WIRE_REQUIRE_GO is set, but {why}");
    say(&format!(
        "skipped: {why}; the kgo flows need Go and franz-go in the module cache \
         (once, online: `cd tests/go && go mod download`)"
    ));
    None
}

/// The kgo flow (`tests/go`), built once per test binary, offline
/// (`GOPROXY=off`), or `None` (skip) without Go or the modules.
pub fn kgo_flow() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT.get_or_init(build_kgo_flow).as_deref()
}

fn go(dir: &Path) -> Command {
    let mut command = Command::new("go");
    command
        .current_dir(dir)
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=readonly -buildvcs=false");
    command
}

fn build_kgo_flow() -> Option<PathBuf> {
    let source = workspace_root().join("tests/go");
    if !Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|out| out.status.success())
    {
        return go_skip("`go` does not run".into());
    }
    let binary = scratch("kgo-build").join("kgo-flow");
    let out = go(&source)
        .args(["build", "-o"])
        .arg(&binary)
        .arg(".")
        .output()
        .unwrap_or_else(|e| panic!("go build: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("GOPROXY=off") {
        return go_skip(format!(
            "the modules of tests/go/go.mod are not in the module cache ({})",
            stderr.lines().next().unwrap_or_default()
        ));
    }
    assert!(
        out.status.success(),
        "`go build` in tests/go failed:\n{stderr}"
    );
    Some(binary)
}

/// Runs a flow program and returns the JSON object it printed, panicking
/// with its output when it fails.
fn flow(mut command: Command, what: &str) -> Value {
    let started = Instant::now();
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}{stderr}",
        out.status
    );
    let last = stdout.lines().last().unwrap_or_default();
    let value: Value =
        serde_json::from_str(last).unwrap_or_else(|e| panic!("{what} printed {last:?}: {e}"));
    say(&format!(
        "{what}: {:.1} s: {value}",
        started.elapsed().as_secs_f64()
    ));
    value
}

/// SASL credentials for a flow: mechanism, user, password.
pub type Sasl<'a> = Option<(&'a str, &'a str, &'a str)>;

/// Runs the kgo flow against `brokers`, with client ids `PREFIX-admin`,
/// `-producer` and `-consumer`.
pub fn run_kgo(binary: &Path, brokers: &str, prefix: &str, records: usize, sasl: Sasl) -> Value {
    run_kgo_with(binary, brokers, prefix, records, sasl, &[])
}

/// [`run_kgo`] with more arguments for the flow, such as
/// `["-transactions"]` (then client `PREFIX-txn` commits one transaction
/// and aborts one).
pub fn run_kgo_with(
    binary: &Path,
    brokers: &str,
    prefix: &str,
    records: usize,
    sasl: Sasl,
    more: &[&str],
) -> Value {
    let mut command = Command::new(binary);
    command.args(more);
    command
        .args(["-brokers", brokers, "-client-prefix", prefix])
        .args(["-topic", &format!("{prefix}-topic")])
        .args(["-group", &format!("{prefix}-group")])
        .args(["-records", &records.to_string()]);
    if let Some((mechanism, user, password)) = sasl {
        command.args([
            "-sasl-mechanism",
            mechanism,
            "-sasl-user",
            user,
            "-sasl-password",
            password,
        ]);
    }
    flow(command, &format!("kgo flow {prefix} against {brokers}"))
}

/// Runs the Java flow against `bootstrap`, with client ids `PREFIX-admin`,
/// `-producer` and `-consumer`.
pub fn run_java(
    jvm: &crate::java::Jvm,
    bootstrap: &str,
    prefix: &str,
    records: usize,
    sasl: Sasl,
) -> Value {
    run_java_with(jvm, bootstrap, prefix, records, sasl, &[])
}

/// [`run_java`] with more arguments for the flow, such as
/// `["--group-protocol", "consumer"]`.
pub fn run_java_with(
    jvm: &crate::java::Jvm,
    bootstrap: &str,
    prefix: &str,
    records: usize,
    sasl: Sasl,
    more: &[&str],
) -> Value {
    let mut command = jvm.command("dev.kafkawire.clients.Flow");
    command.args(more);
    command
        .args(["--bootstrap", bootstrap, "--client-prefix", prefix])
        .args(["--topic", &format!("{prefix}-topic")])
        .args(["--group", &format!("{prefix}-group")])
        .args(["--records", &records.to_string()]);
    if let Some((mechanism, user, password)) = sasl {
        command.args([
            "--sasl-mechanism",
            mechanism,
            "--sasl-user",
            user,
            "--sasl-password",
            password,
        ]);
    }
    flow(command, &format!("java flow {prefix} against {bootstrap}"))
}

/// Checks what every flow reports: each record produced, consumed back,
/// committed, and the one broker address advertised is `advertised`.
pub fn check_flow(outcome: &Value, records: usize, advertised: &str) {
    let records = records as u64;
    assert_eq!(outcome["produced"], records, "{outcome}");
    assert_eq!(outcome["consumed"], records, "{outcome}");
    assert_eq!(outcome["committed"], records, "{outcome}");
    for key in ["advertised", "leaders"] {
        if let Some(addresses) = outcome.get(key) {
            assert_eq!(
                *addresses,
                serde_json::json!([advertised]),
                "{key}: {outcome}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// A proxy's log.

/// The lines of a proxy's log, read once the clients are done.
#[derive(Debug)]
pub struct ProxyLog {
    /// Every line, parsed.
    pub lines: Vec<Value>,
    text: String,
}

/// The apis whose responses carry broker addresses, which the proxy
/// rewrites.
const ADDRESSING: [&str; 3] = ["Metadata", "FindCoordinator", "DescribeCluster"];

impl ProxyLog {
    /// Reads `path` once the log has settled: the proxy's log is written by
    /// a thread of its own, after the answers reach the client, so this
    /// waits (up to 10 s) until it holds a line and has not grown for half
    /// a second.
    pub fn read(path: &Path) -> ProxyLog {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut text = std::fs::read_to_string(path).unwrap_or_default();
        let mut settled = Instant::now();
        while Instant::now() < deadline
            && (text.is_empty() || settled.elapsed() < Duration::from_millis(500))
        {
            std::thread::sleep(Duration::from_millis(50));
            let now = std::fs::read_to_string(path).unwrap_or_default();
            if now.len() != text.len() {
                settled = Instant::now();
                text = now;
            }
        }
        let lines = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        ProxyLog { lines, text }
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The exchange lines of clients whose id starts with `prefix`.
    pub fn exchanges<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.lines.iter().filter(move |l| {
            l.get("api").is_some()
                && l["clientId"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(prefix))
        })
    }

    /// Exchanges per client id and api name, of clients starting with
    /// `prefix`.
    pub fn counts(&self, prefix: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
        let mut counts: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for line in self.exchanges(prefix) {
            let client = line["clientId"].as_str().unwrap_or_default().to_owned();
            let api = line["api"].as_str().unwrap_or_default().to_owned();
            *counts.entry(client).or_default().entry(api).or_default() += 1;
        }
        counts
    }

    /// Every exchange of the clients starting with `prefix` decoded both
    /// ways (a `null` body is one that did not decode: none of these
    /// flows sends Produce with acks=0), no connection failed, and every
    /// broker address in a response is `advertised`. Returns the count.
    pub fn check_decoded(&self, prefix: &str, advertised: &str) -> usize {
        let failures: Vec<_> = self.failures().collect();
        assert!(failures.is_empty(), "connections failed: {failures:?}");
        self.check_exchanges(prefix, advertised)
    }

    /// The lines of connections that ended with an error.
    pub fn failures(&self) -> impl Iterator<Item = &Value> + '_ {
        self.lines.iter().filter(|l| l.get("error").is_some())
    }

    /// [`check_decoded`](Self::check_decoded) without the check that no
    /// connection failed: for clients that may end a process with a
    /// request in flight, which resets its connection.
    pub fn check_exchanges(&self, prefix: &str, advertised: &str) -> usize {
        let (host, port) = advertised
            .rsplit_once(':')
            .unwrap_or_else(|| panic!("{advertised}"));
        let port: u64 = port.parse().unwrap_or_else(|e| panic!("{advertised}: {e}"));
        let mut count = 0;
        for line in self.exchanges(prefix) {
            count += 1;
            assert!(
                !line["request"].is_null() && !line["response"].is_null(),
                "not decoded: {line}"
            );
            let api = line["api"].as_str().unwrap_or_default();
            assert!(
                ApiKey::from_name(api).is_some(),
                "an api kafka-wire does not know: {line}"
            );
            if ADDRESSING.contains(&api) {
                for (h, p) in addresses(&line["response"]) {
                    assert!(
                        h == host && p == port,
                        "a response advertises {h}:{p}, not the proxy {advertised}: {line}"
                    );
                }
            }
        }
        assert!(count > 0, "no exchange of {prefix}* in the log");
        count
    }

    /// Checks the log against a kgo flow's own count of the responses it
    /// read, per client id and api: the log has every one of them (it may
    /// have a few more: answers that reached the proxy as the client
    /// closed).
    pub fn check_kgo_counts(&self, prefix: &str, outcome: &Value) {
        let logged = self.counts(prefix);
        let Some(clients) = outcome["responses"].as_object() else {
            panic!("no responses in {outcome}");
        };
        for (client, apis) in clients {
            let Some(apis) = apis.as_object() else {
                continue;
            };
            let mut seen = 0;
            for (key, count) in apis {
                let key: i16 = key.parse().unwrap_or_else(|e| panic!("{key}: {e}"));
                let api = ApiKey::from_key(key)
                    .unwrap_or_else(|| panic!("kgo read an api kafka-wire lacks: {key}"));
                let count = count.as_u64().unwrap_or_default();
                let have = logged
                    .get(client)
                    .and_then(|a| a.get(api.name()))
                    .copied()
                    .unwrap_or_default();
                assert!(
                    have >= count,
                    "{client} read {count} {} responses, the log has {have}: {logged:?}",
                    api.name()
                );
                seen += count;
            }
            let total: u64 = logged.get(client).map_or(0, |a| a.values().sum());
            assert!(
                total <= seen + 2,
                "{client} read {seen} responses, the log has {total}"
            );
        }
    }

    /// Checks the log against a Java flow's `response-total` metric per
    /// client: the log has at least that many exchanges (more: the SASL
    /// authenticator's own, which the metric does not count, and answers
    /// that reached the proxy as the client closed).
    pub fn check_java_counts(&self, prefix: &str, outcome: &Value) {
        let logged = self.counts(prefix);
        let Some(clients) = outcome["responses"].as_object() else {
            panic!("no responses in {outcome}");
        };
        for (client, count) in clients {
            let count = count.as_u64().unwrap_or_default();
            let apis = logged.get(client);
            let authentication: u64 = apis.map_or(0, |a| {
                a.iter()
                    .filter(|(api, _)| api.starts_with("Sasl"))
                    .map(|(_, n)| n)
                    .sum()
            });
            let total: u64 = apis.map_or(0, |a| a.values().sum());
            assert!(
                total >= count,
                "{client} received {count} responses, the log has {total}: {logged:?}"
            );
            // Each SASL connection also has the authenticator's own
            // ApiVersions.
            assert!(
                total <= count + 2 * authentication + 2,
                "{client} received {count} responses, the log has {total}: {logged:?}"
            );
        }
    }

    /// Asserts that none of `secrets`, nor their base64 or hex forms,
    /// appears anywhere in the log.
    pub fn check_no_secret(&self, secrets: &[&[u8]]) {
        use base64::Engine as _;
        for secret in secrets {
            let forms = [
                String::from_utf8_lossy(secret).into_owned(),
                base64::engine::general_purpose::STANDARD.encode(secret),
                base64::engine::general_purpose::STANDARD_NO_PAD.encode(secret),
                hex::encode(secret),
            ];
            for form in forms {
                assert!(
                    form.len() < 4 || !self.text.contains(&form),
                    "the proxy log shows a secret ({form})"
                );
            }
        }
    }
}

/// Every (host, port) pair of broker entries in a response's JSON form.
fn addresses(value: &Value) -> Vec<(String, u64)> {
    let mut found = Vec::new();
    fn walk(value: &Value, found: &mut Vec<(String, u64)>) {
        match value {
            Value::Object(map) => {
                if let (Some(Value::String(host)), Some(port)) = (map.get("host"), map.get("port"))
                {
                    if !host.is_empty() {
                        found.push((host.clone(), port.as_u64().unwrap_or_default()));
                    }
                }
                map.values().for_each(|v| walk(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    walk(value, &mut found);
    found
}
