//! `kafka-protocol compat` without Java: the fake cluster (in this
//! process) against itself and against a fake made to answer otherwise,
//! each report's form, the allow file, SASL, and the exit statuses: 0 when
//! no difference remains, 1 when some do, 2 on a usage error, 3 when a
//! side cannot be reached (one `error:` line naming it).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kafka_wire::{ApiKey, ErrorCode};
use kafka_wire_fake::control::Intercept;
use kafka_wire_fake::{FakeCluster, FakeClusterBuilder, SaslMechanism};
use kafka_wire_test_support::process::run_with_input;
use serde_json::Value;

/// Fake clusters, served by a runtime of their own until dropped.
struct Fakes {
    runtime: tokio::runtime::Runtime,
    clusters: Vec<FakeCluster>,
}

impl Fakes {
    fn new() -> Fakes {
        Fakes {
            runtime: tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}")),
            clusters: Vec::new(),
        }
    }

    /// Starts a cluster; its first broker's address.
    fn start(&mut self, builder: FakeClusterBuilder) -> String {
        let cluster = self
            .runtime
            .block_on(builder.start())
            .unwrap_or_else(|e| panic!("the fake cluster: {e}"));
        let first = cluster
            .bootstrap()
            .split(',')
            .next()
            .unwrap_or_default()
            .to_owned();
        self.clusters.push(cluster);
        first
    }

    fn last(&self) -> &FakeCluster {
        self.clusters.last().expect("a cluster was started")
    }
}

impl Drop for Fakes {
    fn drop(&mut self) {
        for cluster in self.clusters.drain(..) {
            let _ = self.runtime.block_on(cluster.shutdown());
        }
    }
}

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kafka-wire-cli-compat-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

fn compat(args: &[&str]) -> Output {
    run_with_input(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .arg("compat")
            .args(args),
        b"",
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// A port nothing listens on (one just freed).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_fake_against_itself_reports_no_difference_in_all_three_reports() {
    let mut fakes = Fakes::new();
    let fake = fakes.start(FakeCluster::builder().brokers(1));
    let dir = scratch("itself");
    let (json, markdown) = (dir.join("report.json"), dir.join("report.md"));
    let out = compat(&[
        "--reference",
        &fake,
        "--candidate",
        &fake,
        "--json",
        json.to_str().unwrap_or_default(),
        "--markdown",
        markdown.to_str().unwrap_or_default(),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("kafka-protocol compat, run kwc-"),
        "{stdout}"
    );
    assert!(lines[0].contains(&format!(
        "reference {fake} (cluster kafka-wire-fake, 1 broker)"
    )));
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        [
            "api",
            "cases",
            "same",
            "differ",
            "only-ref",
            "only-cand",
            "allowed"
        ]
    );
    let total: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("total "))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    let last = lines.last().copied().unwrap_or_default();
    assert!(
        last.ends_with("; 0 differences outside the allow list"),
        "{last}"
    );

    let cases = json_lines(&json);
    assert_eq!(total[1], cases.len().to_string(), "{stdout}");
    assert_eq!(total[2], cases.len().to_string());
    let mut names = std::collections::BTreeSet::new();
    for case in &cases {
        let keys: Vec<&str> = case
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            ["case", "area", "api", "version", "verdict", "differences"],
            "{case}"
        );
        assert_eq!(case["verdict"], "same", "{case}");
        assert_eq!(case["differences"], serde_json::json!([]));
        assert!(
            names.insert(case["case"].as_str().unwrap_or_default().to_owned()),
            "{case}"
        );
    }
    let areas: std::collections::BTreeSet<&str> =
        cases.iter().filter_map(|c| c["area"].as_str()).collect();
    assert_eq!(areas, ["scenario", "surface", "sweep"].into());
    // Every sweep case names its api and version; a surface case of an api
    // its api alone.
    let produce = cases
        .iter()
        .find(|c| c["case"] == "sweep/Produce/v9/realistic")
        .unwrap_or_else(|| panic!("no sweep/Produce/v9/realistic"));
    assert_eq!(produce["api"], "Produce");
    assert_eq!(produce["version"], 9);
    let surface = cases
        .iter()
        .find(|c| c["case"] == "surface/api/Fetch")
        .unwrap_or_else(|| panic!("no surface/api/Fetch"));
    assert_eq!(surface["version"], Value::Null);

    let matrix = std::fs::read_to_string(&markdown).unwrap_or_default();
    assert!(matrix.starts_with(&format!(
        "# Kafka protocol compatibility: `{fake}` against `{fake}`\n"
    )));
    assert!(matrix.contains("\n| Produce | 0 | "), "{matrix}");
    assert!(
        matrix.contains("\n## Differences\n\nNone outside the allow list.\n"),
        "{matrix}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn differences_exit_1_with_each_as_a_block_and_an_allow_file_accepts_them() {
    let mut fakes = Fakes::new();
    let reference = fakes.start(FakeCluster::builder().brokers(1));
    let candidate = fakes.start(FakeCluster::builder().brokers(3));
    fakes
        .last()
        .intercept(
            Intercept::api(ApiKey::DescribeCluster).error(ErrorCode::ClusterAuthorizationFailed),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = scratch("differ");
    let json = dir.join("report.json");
    let json_arg = json.to_str().unwrap_or_default();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--reference",
            &reference,
            "--candidate",
            &candidate,
            "--api",
            "DescribeCluster",
            "--api",
            "60",
            // A scenario without a DescribeCluster case: the sweep's alone
            // differ.
            "--scenarios",
            "produce",
            "--json",
            json_arg,
        ];
        args.extend_from_slice(extra);
        compat(&args)
    };

    let out = run(&[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    assert!(
        stdout.contains(
            "\ndiffer: sweep/DescribeCluster/v0/realistic (DescribeCluster v0)\n  request: {\"includeClusterAuthorizedOperations\":false}\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n  errorCode\n    reference: 0\n    candidate: 31\n"),
        "{stdout}"
    );
    let cases = json_lines(&json);
    let sweep: Vec<&Value> = cases.iter().filter(|c| c["area"] == "sweep").collect();
    assert!(sweep.len() >= 4, "{cases:?}");
    for case in &sweep {
        assert_eq!(case["api"], "DescribeCluster");
        assert_eq!(case["verdict"], "differ", "{case}");
        let differences = case["differences"].as_array().cloned().unwrap_or_default();
        assert!(
            differences.contains(
                &serde_json::json!({"path": "errorCode", "reference": 0, "candidate": 31})
            ),
            "{case}"
        );
    }
    let surface: Vec<&Value> = cases.iter().filter(|c| c["area"] == "surface").collect();
    assert_eq!(surface.len(), 1);
    assert_eq!(surface[0]["verdict"], "same");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(&format!(
            "; {} cases differ outside the allow list",
            sweep.len()
        )),
        "{last}"
    );

    let allow = dir.join("allow.txt");
    std::fs::write(
        &allow,
        "# what the candidate is known to do\n\
         sweep/DescribeCluster/*   *   the candidate refuses DescribeCluster on purpose\n\
         sweep/Produce/*           errorCode   never matches\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = run(&["--allow", allow.to_str().unwrap_or_default()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("\nallowed:\n  sweep/DescribeCluster/v0/default ("),
        "{stdout}"
    );
    assert!(stdout.contains("differences): the candidate refuses DescribeCluster on purpose\n"));
    assert!(stdout.contains(
        "\nallow entries that matched no difference:\n  line 3: sweep/Produce/* errorCode (never matches)\n"
    ), "{stdout}");
    assert!(json_lines(&json)
        .iter()
        .filter(|c| c["area"] == "sweep")
        .all(|c| c["verdict"] == "allowed"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_side_that_cannot_be_reached_exits_3_with_one_line_naming_it() {
    let mut fakes = Fakes::new();
    let fake = fakes.start(FakeCluster::builder().brokers(1));
    let nowhere = format!("127.0.0.1:{}", closed_port());
    for (reference, candidate, side) in [
        (fake.as_str(), nowhere.as_str(), "candidate"),
        (nowhere.as_str(), fake.as_str(), "reference"),
    ] {
        let out = compat(&["--reference", reference, "--candidate", candidate]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert_eq!(text(&out.stdout), "");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: the {side} ({nowhere}) cannot be reached: cannot connect: "
            )),
            "{stderr}"
        );
    }
    // A side that accepts connections and never answers is unreachable
    // too, once the timeout passes.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let silent_address = silent
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let out = compat(&[
        "--reference",
        &fake,
        "--candidate",
        &silent_address,
        "--timeout-ms",
        "300",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr,
        format!("error: the candidate ({silent_address}) cannot be reached: no answer in time\n")
    );
}

#[test]
fn sasl_authenticates_every_connection_and_a_refused_side_is_unreachable() {
    let mut fakes = Fakes::new();
    let builder = |password: &str| {
        FakeCluster::builder()
            .brokers(1)
            .sasl_user(SaslMechanism::ScramSha256, "compat", password)
            .sasl_user(SaslMechanism::Plain, "compat", password)
    };
    let good = fakes.start(builder("secret"));
    let other = fakes.start(builder("another"));
    for mechanism in ["SCRAM-SHA-256", "PLAIN"] {
        let credentials = format!("{mechanism}:compat:secret");
        let out = compat(&[
            "--reference",
            &good,
            "--candidate",
            &good,
            "--sasl",
            &credentials,
            "--api",
            "Metadata",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let out = compat(&[
            "--reference",
            &good,
            "--candidate",
            &other,
            "--sasl",
            &credentials,
            "--api",
            "Metadata",
        ]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: the candidate ({other}) cannot be reached: cannot connect: SASL {mechanism}: ")),
            "{stderr}"
        );
        assert!(!stderr.contains("secret"), "{stderr}");
    }
    // Without credentials, the SASL listener closes the connection at
    // Metadata: the side cannot be compared.
    let out = compat(&["--reference", &good, "--candidate", &good]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[test]
fn usage_errors_exit_2() {
    let dir = scratch("usage");
    let malformed = dir.join("malformed.txt");
    std::fs::write(&malformed, "sweep/* errorCode\n").unwrap_or_else(|e| panic!("{e}"));
    let missing = dir.join("missing.txt");
    let unwritable = dir.join("no-such-dir").join("report.json");
    let (malformed, missing, unwritable) = (
        malformed.to_string_lossy().into_owned(),
        missing.to_string_lossy().into_owned(),
        unwritable.to_string_lossy().into_owned(),
    );
    let base = ["--reference", "127.0.0.1:1", "--candidate", "127.0.0.1:2"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--reference", "127.0.0.1:1"], "--candidate"),
        (vec!["--candidate", "127.0.0.1:1"], "--reference"),
        (
            [&base[..], &["--scenarios", "produce,nope"]].concat(),
            "--scenarios: no scenario is named `nope`; the scenarios: produce, ",
        ),
        (
            [&base[..], &["--replay", &missing, "--port", "9092"]].concat(),
            "--replay",
        ),
        (
            [&base[..], &["--replay", &malformed, "--port", "9092"]].concat(),
            "not a pcap or pcapng capture",
        ),
        ([&base[..], &["--replay", "x.pcap"]].concat(), "--port"),
        ([&base[..], &["--port", "9092"]].concat(), "--replay"),
        (
            [&base[..], &["--api", "NoSuchApi"]].concat(),
            "unknown api `NoSuchApi`",
        ),
        ([&base[..], &["--allow", &missing]].concat(), "--allow"),
        (
            [&base[..], &["--allow", &malformed]].concat(),
            "line 1: every entry needs a reason",
        ),
        ([&base[..], &["--timeout-ms", "0"]].concat(), "--timeout-ms"),
        (
            [&base[..], &["--sasl", "GSSAPI:u:p"]].concat(),
            "MECHANISM:USER:PASSWORD",
        ),
        ([&base[..], &["--json", &unwritable]].concat(), "--json"),
        (
            [&base[..], &["--markdown", &unwritable]].concat(),
            "--markdown",
        ),
        ([&base[..], &["--no-such-flag"]].concat(), "--no-such-flag"),
    ];
    for (args, expected) in cases {
        let out = compat(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error:"), "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected {expected:?} in {stderr}"
        );
        assert_eq!(text(&out.stdout), "", "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture of one client to port 9092: ApiVersions, then DescribeConfigs
/// of topic `orders` (answers left at their defaults).
fn describe_configs_capture() -> Vec<u8> {
    use kafka_wire::{RequestBody, ResponseBody};
    use kafka_wire_test_support::frames::{request_bytes, response_bytes};
    use kafka_wire_test_support::pcap::{pcap, Flow, Link};
    let request = |api: ApiKey, version: i16, id: i32, body: Value| {
        let body = RequestBody::from_json(&body, api, version).unwrap_or_else(|e| panic!("{e}"));
        request_bytes(version, id, "app", body)
    };
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut frames = flow.handshake();
    for (api, version, id, body) in [
        (
            ApiKey::ApiVersions,
            3,
            1,
            serde_json::json!({"clientSoftwareName": "app", "clientSoftwareVersion": "1"}),
        ),
        (
            ApiKey::DescribeConfigs,
            4,
            2,
            serde_json::json!({"resources": [{"resourceType": 2, "resourceName": "orders",
                               "configurationKeys": ["cleanup.policy"]}],
                               "includeSynonyms": false, "includeDocumentation": false}),
        ),
    ] {
        frames.extend(flow.send(true, &request(api, version, id, body), 1460));
        let answer = response_bytes(version, id, ResponseBody::default_for(api));
        frames.extend(flow.send(false, &answer, 1460));
    }
    frames.extend(flow.close());
    pcap(1, false, &frames)
}

#[test]
fn replay_plays_a_captures_requests_as_cases_of_their_own() {
    let mut fakes = Fakes::new();
    let reference = fakes.start(FakeCluster::builder().brokers(1));
    let candidate = fakes.start(FakeCluster::builder().brokers(1));
    let dir = scratch("replay");
    let capture = dir.join("app.pcap");
    std::fs::write(&capture, describe_configs_capture()).unwrap_or_else(|e| panic!("{e}"));
    let json = dir.join("report.json");
    let out = compat(&[
        "--reference",
        &reference,
        "--candidate",
        &candidate,
        "--api",
        "DescribeConfigs",
        "--replay",
        capture.to_str().unwrap_or_default(),
        "--port",
        "9092",
        "--json",
        json.to_str().unwrap_or_default(),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let replayed: Vec<Value> = json_lines(&json)
        .into_iter()
        .filter(|c| c["area"] == "replay")
        .collect();
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(replayed[0]["case"], "replay/conn-1/2-DescribeConfigs-v4");
    assert_eq!(replayed[0]["verdict"], "same");
    assert!(
        stdout.contains("replay conn-1/1 ApiVersions v3: skipped"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
