//! The interop suite (issue 43): kcat, kafka-python, confluent-kafka and
//! kafkajs (`tests/interop/`, see `kafka_wire_tests::interop`) against
//! `kafka-protocol fake --brokers 1`, `--brokers 3` and real Kafka 4.4.0,
//! with the same code and the same checks everywhere.
//!
//! Each client produces three messages with keys, values, headers and
//! (where the client can set one) timestamps to one topic per codec (none,
//! gzip, snappy, lz4, zstd), idempotently; then:
//!
//! - the topics' record batches are read back with a raw Fetch (kafka-wire's
//!   Fetch v12, batches parsed by kafka-wire-records): every batch must
//!   carry the compression attribute of the codec asked for (no silent
//!   fallback to none; Kafka keeps the producer's codec under the default
//!   `compression.type=producer`), and the topic exactly the records
//!   produced;
//! - the same client consumes them in a consumer group, commits and
//!   leaves; `spec.py verify` requires exactly the produced keys, values,
//!   headers and timestamps, in order (kcat cannot set a timestamp: its
//!   records need a CreateTime within the time its producer ran);
//! - the group's committed offsets (OffsetFetch, at the group's
//!   coordinator) are the topics' ends, and the group has no member left
//!   (DescribeGroups).
//!
//! Two cross runs do the same with another consumer: kcat produces for
//! kafkajs, kafka-python for confluent-kafka. The clients of one target run
//! at once, in threads; real Kafka starts while the fakes run. Both fakes
//! must exit 0 on SIGTERM, having printed nothing on standard output but
//! their bootstrap line (as must every proxy below). Each run prints a line such as `interop kcat on
//! fake-3: 15 records checked (none gzip snappy lz4 zstd), group consumed
//! and committed`.
//!
//! Against the one-broker fake also (the other tests of this file):
//!
//! - every client again through `kafka-protocol proxy --log`: the log holds
//!   each client's exchanges decoded both ways, Produce, Fetch and Metadata
//!   among them, and advertises no address but the proxy's; the proxy exits
//!   0 on SIGTERM. Then kcat through the `tenant_proxy` example: it writes
//!   and reads `orders`, which the broker holds as `tenant-a.orders`, and
//!   lists no prefixed name;
//! - kcat consumes the batches `RecordBatchBuilder` writes, one per codec
//!   (the `produce_batches` example);
//! - raw sockets: ApiVersions at an unsupported version, an api the fake
//!   does not implement, an api key no one knows.
//!
//! A missing client skips its runs with a message (a failure under
//! `KAFKA_WIRE_REQUIRE_INTEROP`); without Java or the broker's jars the
//! Kafka runs skip (a failure under `KAFKA_WIRE_REQUIRE_JAVA`). With
//! `KAFKA_WIRE_UPDATE_CLIENT_FIXTURES` set, the one-broker fake records its
//! frames and each client's run replaces `fixtures/clients/<client>/`
//! (read by `client_captures.rs`). Run alone, build the programs first:
//! `cargo build -p kafka-wire-cli -p kafka-wire-examples --examples --bins`.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use kafka_wire::frame::ResponseFrame;
use kafka_wire::messages::{
    fetch_request, ApiVersionsRequest, ApiVersionsResponse, DescribeAclsRequest, FetchRequest,
};
use kafka_wire::{ApiKey, ErrorCode};
use kafka_wire_records::{Batch, Batches, Compression, DecodeOptions};
use kafka_wire_test_support::kafka::{pinned_version, Kafka};
use kafka_wire_test_support::process::run_with_input;
use kafka_wire_tests::broker::{Client as WireClient, Session};
use kafka_wire_tests::clients::{built, fake_cluster, proxy, say, scratch, Listening, ProxyLog};
use kafka_wire_tests::interop::{self, step, Client};
use kafka_wire_tests::workspace_root;
use serde_json::{json, Value};

/// The cross runs: who produces, who consumes.
const CROSS: [(Client, Client); 2] = [
    (Client::Kcat, Client::Kafkajs),
    (Client::KafkaPython, Client::ConfluentKafka),
];
/// The null topic id of Metadata requests by name.
const NO_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";
/// The client id of this file's own checks.
const CHECKER: &str = "interop-check";

/// The codecs by name, space-separated, as the lines print them.
fn codec_names() -> String {
    Compression::ALL.map(Compression::name).join(" ")
}

/// Milliseconds since the epoch.
fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_else(|e| panic!("the clock: {e}"));
    i64::try_from(since.as_millis()).unwrap_or_else(|e| panic!("the clock: {e}"))
}

/// The first address of a bootstrap list.
fn first(bootstrap: &str) -> &str {
    bootstrap.split(',').next().unwrap_or(bootstrap)
}

// ---------------------------------------------------------------------------
// The spec a producer is given (`spec.py make`).

/// One topic of a spec.
#[derive(Debug)]
struct Topic {
    name: String,
    codec: String,
    messages: usize,
}

/// Writes the spec of `producer`'s messages, topics `PREFIX-CODEC`, to
/// `dir/spec.json`; returns its path and topics.
fn make_spec(dir: &Path, producer: Client, prefix: &str) -> Option<(PathBuf, Vec<Topic>)> {
    let python = interop::python()?;
    let path = dir.join("spec.json");
    let mut command = Command::new(python);
    command
        .arg(interop::interop_dir().join("clients/spec.py"))
        .args(["make", "--client", producer.name()])
        .args(["--codecs", &codec_names().replace(' ', ",")])
        .args(["--prefix", prefix, "--out"])
        .arg(&path);
    step("spec.py make", command, &dir.join("spec.log"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let topics = spec["topics"]
        .as_array()
        .unwrap_or_else(|| panic!("no topics in {spec}"))
        .iter()
        .map(|t| Topic {
            name: t["topic"].as_str().unwrap_or_default().to_owned(),
            codec: t["codec"].as_str().unwrap_or_default().to_owned(),
            messages: t["messages"].as_array().map_or(0, Vec::len),
        })
        .collect();
    Some((path, topics))
}

// ---------------------------------------------------------------------------
// Checks through the wire, the same against every target.

/// Metadata of `topic` once it has a leader (a topic a producer created
/// may not have one at once): the leader's address.
fn leader(bootstrap: &str, topic: &str) -> String {
    let mut session = Session::connect(first(bootstrap), CHECKER);
    let answer = session.json_until(
        ApiKey::Metadata,
        &json!({"topics": [{"name": topic, "topicId": NO_ID}], "allowAutoTopicCreation": false}),
        |a| {
            a["topics"][0]["errorCode"] == 0
                && a["topics"][0]["partitions"][0]["leaderId"].as_i64() >= Some(0)
        },
    );
    let id = &answer["topics"][0]["partitions"][0]["leaderId"];
    let broker = answer["brokers"]
        .as_array()
        .and_then(|brokers| brokers.iter().find(|b| b["nodeId"] == *id))
        .unwrap_or_else(|| panic!("leader {id} of {topic} is not among the brokers: {answer}"));
    format!(
        "{}:{}",
        broker["host"].as_str().unwrap_or_default(),
        broker["port"]
    )
}

/// Reads partition 0 of `topic` from its start with Fetch v12 at its
/// leader: the codec and record count of every batch.
fn batches(bootstrap: &str, topic: &str) -> Vec<(Compression, usize)> {
    let address = leader(bootstrap, topic);
    let mut client = WireClient::connect(&address, CHECKER)
        .unwrap_or_else(|e| panic!("connecting to {address}: {e}"));
    let mut found = Vec::new();
    let mut offset = 0;
    loop {
        let request = FetchRequest {
            replica_id: -1,
            max_wait_ms: 0,
            min_bytes: 1,
            max_bytes: 1 << 20,
            session_epoch: -1,
            topics: vec![fetch_request::FetchTopic {
                topic: topic.to_owned().into(),
                partitions: vec![fetch_request::FetchPartition {
                    partition: 0,
                    current_leader_epoch: -1,
                    fetch_offset: offset,
                    last_fetched_epoch: -1,
                    log_start_offset: -1,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        };
        let response = client.call(12, request);
        assert_eq!(response.error_code, 0, "Fetch of {topic}: {response:?}");
        let answered = response
            .responses
            .iter()
            .next()
            .unwrap_or_else(|| panic!("Fetch of {topic}: no topic in {response:?}"));
        let partition = answered
            .partitions
            .iter()
            .next()
            .unwrap_or_else(|| panic!("Fetch of {topic}: no partition in {response:?}"));
        assert_eq!(partition.error_code, 0, "Fetch of {topic}: {partition:?}");
        let blob = partition.records.as_deref().unwrap_or_default();
        for batch in Batches::new(blob, &DecodeOptions::default()) {
            match batch.unwrap_or_else(|e| panic!("a batch of {topic}: {e}")) {
                Batch::V2(batch) => {
                    let header = batch.header();
                    found.push((batch.compression(), batch.records().count()));
                    offset = header.last_offset() + 1;
                }
                Batch::Legacy(entry) => {
                    panic!("{topic} holds a message of magic {}", entry.message().magic)
                }
            }
        }
        if offset >= partition.high_watermark {
            return found;
        }
        assert!(
            !blob.is_empty(),
            "Fetch of {topic} at {offset}: nothing, below {}",
            partition.high_watermark
        );
    }
}

/// Every batch of each topic has its codec, and the topic holds exactly
/// the records produced.
fn check_codecs(bootstrap: &str, topics: &[Topic], what: &str) {
    for topic in topics {
        let found = batches(bootstrap, &topic.name);
        let codecs: Vec<&str> = found.iter().map(|(c, _)| c.name()).collect();
        assert!(
            !found.is_empty() && codecs.iter().all(|c| *c == topic.codec),
            "{what}: {} was asked for {}, its batches are {codecs:?}",
            topic.name,
            topic.codec
        );
        let records: usize = found.iter().map(|(_, n)| n).sum();
        assert_eq!(
            records, topic.messages,
            "{what}: records of {}: {found:?}",
            topic.name
        );
    }
}

/// The session of `group`'s coordinator, once it has one.
fn coordinator(bootstrap: &str, group: &str) -> Session {
    let mut session = Session::connect(first(bootstrap), CHECKER);
    let found = session.json_until(
        ApiKey::FindCoordinator,
        &json!({"key": group, "keyType": 0, "coordinatorKeys": [group]}),
        |a| {
            let entry = a["coordinators"].get(0).unwrap_or(a);
            entry["errorCode"] == 0
        },
    );
    let entry = found["coordinators"].get(0).unwrap_or(&found);
    let address = format!(
        "{}:{}",
        entry["host"].as_str().unwrap_or_default(),
        entry["port"]
    );
    Session::connect(&address, CHECKER)
}

/// The group committed every topic's end and has no member left.
fn check_group(bootstrap: &str, group: &str, topics: &[Topic], what: &str) {
    let mut session = coordinator(bootstrap, group);
    // v8: groups by name and topics by name (v10 names topics by id).
    let names: Vec<Value> = topics
        .iter()
        .map(|t| json!({"name": t.name, "partitionIndexes": [0]}))
        .collect();
    let answer = session.json_at(
        ApiKey::OffsetFetch,
        8,
        &json!({"groups": [{"groupId": group, "topics": names}], "requireStable": false}),
    );
    let fetched = &answer["groups"][0];
    assert_eq!(fetched["errorCode"], 0, "{what}: OffsetFetch: {answer}");
    for topic in topics {
        let committed = fetched["topics"]
            .as_array()
            .and_then(|all| all.iter().find(|t| t["name"] == topic.name.as_str()))
            .map(|t| &t["partitions"][0]);
        let committed =
            committed.unwrap_or_else(|| panic!("{what}: no {} in {answer}", topic.name));
        assert_eq!(
            (
                &committed["errorCode"],
                committed["committedOffset"].as_u64()
            ),
            (&json!(0), Some(topic.messages as u64)),
            "{what}: the committed offset of {}: {answer}",
            topic.name
        );
    }
    let described = session.json(
        ApiKey::DescribeGroups,
        &json!({"groups": [group], "includeAuthorizedOperations": false}),
    );
    let described = &described["groups"][0];
    assert_eq!(
        (
            &described["errorCode"],
            &described["groupState"],
            &described["members"]
        ),
        (&json!(0), &json!("Empty"), &json!([])),
        "{what}: the group after its consumer left: {described}"
    );
}

// ---------------------------------------------------------------------------
// One run.

/// Where a run goes: a name for the lines (`fake-1`, `kafka`) and a
/// bootstrap.
#[derive(Debug, Clone)]
struct Target {
    name: String,
    bootstrap: String,
}

/// `producer` produces a spec with every codec, `consumer` consumes it in
/// a group; every check. The line it printed, or `None` when a client is
/// missing (skipped).
fn exchange(target: &Target, producer: Client, consumer: Client) -> Option<String> {
    let (mut produce, mut consume) = (producer.flow()?, consumer.flow()?);
    let (name, tag) = if producer == consumer {
        (producer.name().to_owned(), producer.name().to_owned())
    } else {
        (
            format!("{} -> {}", producer.name(), consumer.name()),
            format!("cross-{}-{}", producer.name(), consumer.name()),
        )
    };
    let prefix = format!("{}-{tag}", target.name);
    let what = format!("{name} on {}", target.name);
    let dir = scratch(&format!("interop/{prefix}"));
    let (spec, topics) = make_spec(&dir, producer, &prefix)?;
    let started = Instant::now();
    let bootstrap = target.bootstrap.as_str();
    let common = |command: &mut Command, role: &str, client_id: &str| {
        command
            .args([role, "--bootstrap", bootstrap, "--spec"])
            .arg(&spec)
            .args(["--client-id", &format!("{prefix}-{client_id}")]);
    };
    let produced_from = now_ms();
    common(&mut produce, "produce", "producer");
    step(
        &format!("{what}: produce"),
        produce,
        &dir.join("produce.log"),
    );
    let produced_to = now_ms();
    check_codecs(bootstrap, &topics, &what);

    let group = format!("{prefix}-group");
    let consumed = dir.join("consumed.jsonl");
    common(&mut consume, "consume", "consumer");
    consume.args(["--group", &group, "--out"]).arg(&consumed);
    step(
        &format!("{what}: consume"),
        consume,
        &dir.join("consume.log"),
    );
    let python = interop::python()?;
    let mut verify = Command::new(python);
    verify
        .arg(interop::interop_dir().join("clients/spec.py"))
        .arg("verify")
        .arg(&spec)
        .arg(&consumed)
        .args([
            "--produced-between",
            &produced_from.to_string(),
            &produced_to.to_string(),
        ]);
    step(
        &format!("{what}: spec.py verify"),
        verify,
        &dir.join("verify.log"),
    );
    check_group(bootstrap, &group, &topics, &what);

    let records: usize = topics.iter().map(|t| t.messages).sum();
    let line = format!(
        "interop {what}: {records} records checked ({}), group consumed and committed",
        codec_names()
    );
    say(&format!(
        "{line} ({:.1} s)",
        started.elapsed().as_secs_f64()
    ));
    Some(line)
}

/// Every client's own run and the cross runs against `target`, at once;
/// the lines printed.
fn every_run(target: &Target) -> Vec<String> {
    let pairs = Client::ALL.map(|c| (c, c)).into_iter().chain(CROSS);
    std::thread::scope(|scope| {
        let runs: Vec<_> = pairs
            .map(|(producer, consumer)| scope.spawn(move || exchange(target, producer, consumer)))
            .collect();
        runs.into_iter()
            .filter_map(|run| {
                run.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Stops a fake (or proxy) with SIGTERM: it must exit 0, having printed
/// nothing on standard output but its first line.
fn stop(what: &str, server: Listening) {
    let (code, stdout, stderr) = server.stop_with_output();
    assert_eq!(code, Some(0), "{what} on SIGTERM:\n{stderr}");
    assert_eq!(stdout, "", "{what} printed more than its first line");
}

/// Real Kafka, started once for the test binary (the script's watchdog
/// stops it when the process ends), or `None` (skipped).
fn kafka() -> Option<&'static str> {
    static KAFKA: OnceLock<Option<(Kafka, String)>> = OnceLock::new();
    KAFKA
        .get_or_init(|| {
            let kafka = Kafka::start("interop", &pinned_version(), &[])?;
            let bootstrap = kafka.bootstrap().to_owned();
            Some((kafka, bootstrap))
        })
        .as_ref()
        .map(|(_, bootstrap)| bootstrap.as_str())
}

/// With `KAFKA_WIRE_UPDATE_CLIENT_FIXTURES` set: where the one-broker fake
/// records its frames.
fn fixture_capture(dir: &Path) -> Option<PathBuf> {
    std::env::var_os("KAFKA_WIRE_UPDATE_CLIENT_FIXTURES").map(|_| dir.join("capture.jsonl"))
}

/// Replaces `fixtures/clients/<client>/` with each client's own run on the
/// one-broker fake: its frames (`capture.py extract`) and its spec; prints
/// the api versions each client used (`capture.py versions`), for
/// `fixtures/clients/README.md`.
fn update_fixtures(capture: &Path) {
    let Some(python) = interop::python() else {
        return;
    };
    for client in Client::ALL {
        let prefix = format!("fake-1-{}", client.name());
        let run = workspace_root()
            .join("target/tmp/real-clients/interop")
            .join(&prefix);
        let dir = workspace_root()
            .join("fixtures/clients")
            .join(client.name());
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut extract = Command::new(python);
        extract
            .arg(interop::interop_dir().join("clients/capture.py"))
            .arg("extract")
            .arg(capture)
            .args(["--client-prefix", &format!("{prefix}-"), "--out"])
            .arg(dir.join("frames.jsonl"));
        say(&step(
            "capture.py extract",
            extract,
            &run.join("extract.log"),
        ));
        let mut versions = Command::new(python);
        versions
            .arg(interop::interop_dir().join("clients/capture.py"))
            .arg("versions")
            .arg(capture)
            .args(["--client-prefix", &format!("{prefix}-")]);
        let table = step("capture.py versions", versions, &run.join("versions.log"));
        say(&format!("api versions {} used:\n{table}", client.name()));
        std::fs::copy(run.join("spec.json"), dir.join("messages.json"))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
}

#[test]
fn the_clients_pass_the_same_checks_against_the_fake_and_kafka() {
    let started = Instant::now();
    // Kafka starts while the fakes run.
    let starting = std::thread::spawn(|| kafka().is_some());
    let mut lines = Vec::new();
    for brokers in [1, 3] {
        let dir = scratch(&format!("interop/fake-{brokers}"));
        let capture = fixture_capture(&dir).filter(|_| brokers == 1);
        let mut more: Vec<&OsStr> = Vec::new();
        if let Some(capture) = &capture {
            more.extend([OsStr::new("--capture"), capture.as_os_str()]);
        }
        let fake = fake_cluster(&dir, brokers, &more);
        let target = Target {
            name: format!("fake-{brokers}"),
            bootstrap: fake.address().to_owned(),
        };
        lines.extend(every_run(&target));
        stop(&format!("the fake of {brokers} brokers"), fake);
        if let Some(capture) = capture {
            update_fixtures(&capture);
        }
    }
    let up = starting
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    if let (true, Some(bootstrap)) = (up, kafka()) {
        let target = Target {
            name: "kafka".into(),
            bootstrap: bootstrap.to_owned(),
        };
        lines.extend(every_run(&target));
    }
    lines.sort();
    say(&format!(
        "interop: {} runs in {:.1} s:\n  {}",
        lines.len(),
        started.elapsed().as_secs_f64(),
        lines.join("\n  ")
    ));
}

#[test]
fn every_client_through_the_proxy_and_kcat_through_the_tenant_proxy() {
    let dir = scratch("interop/proxy");
    let fake = fake_cluster(&dir, 1, &[]);
    let (proxy, log) = proxy(&dir, "proxy", fake.address());
    let target = Target {
        name: "proxy".into(),
        bootstrap: proxy.address().to_owned(),
    };
    let ran: Vec<Client> = std::thread::scope(|scope| {
        let runs: Vec<_> = Client::ALL
            .map(|c| {
                (
                    c,
                    scope.spawn({
                        let target = &target;
                        move || exchange(target, c, c)
                    }),
                )
            })
            .into_iter()
            .collect();
        runs.into_iter()
            .filter_map(|(client, run)| {
                run.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    .map(|_| client)
            })
            .collect()
    });
    let address = proxy.address().to_owned();
    let fake_port = port(fake.address());
    stop("kafka-protocol proxy", proxy);
    if !ran.is_empty() {
        let log = ProxyLog::read(&log);
        // A client process that exits with a request in flight (kcat at
        // the end of its partitions, say) resets its connection: the one
        // failure allowed, and only on the client's side.
        for failure in log.failures() {
            let error = failure["error"].as_str().unwrap_or_default();
            assert!(
                error.starts_with("client connection failed: Connection reset by peer"),
                "a connection through the proxy failed: {failure}"
            );
        }
        for client in &ran {
            let prefix = format!("proxy-{}-", client.name());
            let count = log.check_exchanges(&prefix, &address);
            let counts = log.counts(&prefix);
            for api in ["Produce", "Fetch", "Metadata"] {
                assert!(
                    counts.values().any(|apis| apis.contains_key(api)),
                    "no {api} of {prefix}* in the proxy's log: {counts:?}"
                );
            }
            // Beyond the addressing apis: no response at all (a Produce
            // or Fetch naming the current leader, say) carries the fake's
            // own port.
            for line in log.exchanges(&prefix) {
                assert!(
                    !ports(&line["response"]).contains(&fake_port),
                    "a response carries the fake's port {fake_port}: {line}"
                );
            }
            say(&format!(
                "interop {} through the proxy: {count} exchanges logged, all decoded, only the proxy advertised",
                client.name()
            ));
        }
    }
    tenant_flow(&dir, fake.address());
    stop("the fake", fake);
}

/// The port of an address.
fn port(address: &str) -> u64 {
    address
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {address}"))
}

/// Every `port` value in a JSON body, at any depth.
fn ports(value: &Value) -> Vec<u64> {
    match value {
        Value::Object(map) => map
            .iter()
            .flat_map(|(key, item)| {
                let own = (key == "port").then(|| item.as_u64()).flatten();
                own.into_iter().chain(ports(item))
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(ports).collect(),
        _ => Vec::new(),
    }
}

/// kcat through the `tenant_proxy` example, which prefixes topic names
/// with `tenant-a.`.
fn tenant_flow(dir: &Path, bootstrap: &str) {
    if interop::kcat().is_none() {
        return;
    }
    let mut command = Command::new(built("examples/tenant_proxy"));
    command.args([
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        bootstrap,
        "--prefix",
        "tenant-a.",
    ]);
    let tenant = Listening::start(&mut command, &dir.join("tenant_proxy.err"));
    let kcat = |args: &[&str], input: &[u8]| -> String {
        let mut command = interop::kcat().unwrap_or_else(|| panic!("kcat"));
        let out = run_with_input(command.args(args), input);
        assert!(
            out.status.success(),
            "kcat {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let expected = "one\ntwo\nthree\n";
    let via = tenant.address().to_owned();
    kcat(
        &["-b", &via, "-t", "orders", "-P", "-z", "lz4"],
        expected.as_bytes(),
    );
    let read = |address: &str, topic: &str| {
        kcat(
            &[
                "-b",
                address,
                "-t",
                topic,
                "-C",
                "-o",
                "beginning",
                "-e",
                "-q",
            ],
            b"",
        )
    };
    assert_eq!(
        read(&via, "orders"),
        expected,
        "orders through tenant_proxy"
    );
    assert_eq!(
        read(bootstrap, "tenant-a.orders"),
        expected,
        "tenant-a.orders on the fake"
    );
    let listed = kcat(&["-b", &via, "-L"], b"");
    assert!(
        listed.contains("\"orders\"") && !listed.contains("tenant-a."),
        "the tenant's listing:\n{listed}"
    );
    say("interop kcat through tenant_proxy: 3 records written and read as orders, held as tenant-a.orders");
    stop("tenant_proxy", tenant);
}

#[test]
fn kcat_reads_the_batches_the_builder_writes() {
    let Some(mut kcat) = interop::kcat() else {
        return;
    };
    let dir = scratch("interop/builder");
    let fake = fake_cluster(&dir, 1, &[]);
    let topic = "builder-batches";
    let mut produce = Command::new(built("examples/produce_batches"));
    produce.args([fake.address(), topic, "3"]);
    let written = step("produce_batches", produce, &dir.join("produce.log"));
    // Its lines are `key<TAB>value<TAB>codec`; each record has the header
    // `codec=<codec>`, which kcat prints as such.
    let expected: String = written
        .lines()
        .map(|line| {
            let (record, codec) = line.rsplit_once('\t').unwrap_or_else(|| panic!("{line:?}"));
            format!("{record}\tcodec={codec}\n")
        })
        .collect();
    kcat.args([
        "-b",
        fake.address(),
        "-t",
        topic,
        "-C",
        "-o",
        "beginning",
        "-e",
        "-q",
    ])
    .args(["-f", "%k\\t%s\\t%h\\n"]);
    let consumed = step(
        "kcat consuming the builder's batches",
        kcat,
        &dir.join("consume.log"),
    );
    assert_eq!(
        consumed, expected,
        "kcat read other records than the builder wrote"
    );
    let codecs = Compression::ALL.len();
    assert_eq!(expected.lines().count(), 3 * codecs, "{written}");
    say(&format!(
        "interop kcat read all {} builder records, {codecs} batches ({})",
        3 * codecs,
        codec_names()
    ));
    stop("the fake", fake);
}

#[test]
fn the_fake_refuses_what_it_does_not_handle() {
    let dir = scratch("interop/edge-cases");
    let fake = fake_cluster(&dir, 1, &[]);
    let address = fake.address().to_owned();
    let mut client =
        WireClient::connect(&address, "edge-cases").unwrap_or_else(|e| panic!("{address}: {e}"));

    // ApiVersions v99, with a flexible header: the fake answers v0, with
    // UNSUPPORTED_VERSION and its own range of ApiVersions.
    let mut frame = Vec::new();
    frame.extend(ApiKey::ApiVersions.key().to_be_bytes());
    frame.extend(99i16.to_be_bytes());
    frame.extend(1i32.to_be_bytes());
    frame.extend(10i16.to_be_bytes());
    frame.extend(b"edge-cases");
    frame.push(0); // no tagged fields
    let mut sized = i32::try_from(frame.len())
        .unwrap_or_default()
        .to_be_bytes()
        .to_vec();
    sized.extend(frame);
    client.send_raw(&sized).unwrap_or_else(|e| panic!("{e}"));
    let answer = client
        .read_frame()
        .unwrap_or_else(|e| panic!("ApiVersions v99: {e}"));
    let answer = ResponseFrame::decode(&answer, ApiKey::ApiVersions, 0)
        .unwrap_or_else(|e| panic!("the ApiVersions v99 answer as v0: {e}"));
    let body = ApiVersionsResponse::try_from(answer.body)
        .unwrap_or_else(|_| panic!("not an ApiVersions answer"));
    assert_eq!(answer.header.correlation_id, 1);
    assert_eq!(
        body.error_code,
        ErrorCode::UnsupportedVersion.code(),
        "{body:?}"
    );
    let ranges: Vec<(i16, i16)> = body
        .api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version))
        .collect();
    assert_eq!(ranges, [(ApiKey::ApiVersions.key(), 0)], "{body:?}");

    // An api the fake does not implement: UNSUPPORTED_VERSION, and the
    // connection stays open.
    let acls = client.call(
        3,
        DescribeAclsRequest {
            resource_type_filter: 1,
            pattern_type_filter: 3,
            operation: 1,
            permission_type: 1,
            ..Default::default()
        },
    );
    assert_eq!(
        acls.error_code,
        ErrorCode::UnsupportedVersion.code(),
        "{acls:?}"
    );
    let versions = client.call(0, ApiVersionsRequest::default());
    assert_eq!(
        versions.error_code, 0,
        "ApiVersions v0 after DescribeAcls: {versions:?}"
    );

    // An api key no one knows: the connection is closed.
    let mut client =
        WireClient::connect(&address, "edge-cases").unwrap_or_else(|e| panic!("{address}: {e}"));
    let mut frame = Vec::new();
    frame.extend(0x7fffi16.to_be_bytes());
    frame.extend(0i16.to_be_bytes());
    frame.extend(4i32.to_be_bytes());
    frame.extend(10i16.to_be_bytes());
    frame.extend(b"edge-cases");
    let mut sized = i32::try_from(frame.len())
        .unwrap_or_default()
        .to_be_bytes()
        .to_vec();
    sized.extend(frame);
    client.send_raw(&sized).unwrap_or_else(|e| panic!("{e}"));
    match client.read_frame() {
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
            ) => {}
        other => panic!("api key 32767: the connection should be closed, got {other:?}"),
    }
    say("interop edge cases: ApiVersions v99 answered v0 with UNSUPPORTED_VERSION, DescribeAcls v3 refused with the connection kept, api key 32767 closed");
    stop("the fake", fake);
}
