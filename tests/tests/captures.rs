//! A real capture of real Kafka, read by `kafka-protocol pcap` and by
//! tshark beside it (issue 45, stage 2).
//!
//! `tcpdump -U -i lo` starts before the brokers and records loopback TCP
//! on the ports `tests/kafka/broker.sh` picks from (20000 to 31999). Then:
//!
//! - one combined node of real Kafka, through which Kafka's Java clients
//!   (the flow of `real_clients.rs`: admin calls, an idempotent producer,
//!   a group consumer), kgo (the same flow, then a transactional producer
//!   that commits one transaction and aborts one) and librdkafka (kcat
//!   produces and consumes) run;
//! - a quorum of three controllers, whose leader is stopped so that the
//!   others hold a pre-vote (Vote v2 with `preVote: true`) and a vote.
//!
//! tcpdump is stopped with SIGINT and must report no packet dropped by the
//! kernel. Then:
//!
//! - a naive reassembler of this file's own (in order, per TCP direction,
//!   split at the size prefixes; not the crate's) counts the Kafka frames
//!   on the nodes' ports, and `kafka-protocol pcap` must have decoded and
//!   paired every one of them: each request in an exchange (or, for the
//!   last requests of a connection that closed first, an `unanswered`
//!   event), each response in the exchange of its request, no other event;
//! - the Vote requests with `preVote: true` are there;
//! - tshark dissects the same file (`-d tcp.port==PORT,kafka` for each
//!   node's port) and, on every frame it dissects without error, agrees
//!   with ours on api key, version and correlation id, the topic names and
//!   the error codes. Frames its dissector does not know (an api key or a
//!   version newer than it, a response to a request it did not dissect) or
//!   marks malformed are counted apart, by rule, and printed.
//!
//! Without tcpdump, tshark or kcat, when tcpdump cannot capture (not root),
//! or without Java or Go, it skips with a message; `KAFKA_WIRE_REQUIRE_CAPTURE`
//! (set by `.ci/run`) makes that a failure.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kafka_wire::ApiKey;
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_test_support::tcpdump::Tcpdump;
use kafka_wire_tests::clients::{
    built, check_flow, kgo_flow, run_java, run_kgo_with, say, scratch,
};
use kafka_wire_tests::java::jvm;
use serde_json::Value;

const RECORDS: usize = 5;
/// The ports `broker.sh` picks its listeners from; clients' ports are
/// outside (Linux's ephemeral range starts at 32768).
const PORTS: &str = "portrange 20000-31999";

fn required() -> bool {
    std::env::var_os("KAFKA_WIRE_REQUIRE_CAPTURE").is_some()
}

fn skip(why: &str) {
    assert!(!required(), "KAFKA_WIRE_REQUIRE_CAPTURE is set, but {why}");
    say(&format!(
        "skipped the capture test: {why}; it needs tcpdump (run as root), tshark, kcat, Java and Go"
    ));
}

fn runs(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

// ---------------------------------------------------------------------------
// The naive reader: pcap, Ethernet, IPv4, TCP; in order per direction.

/// A Kafka frame as the naive reader splits it.
#[derive(Debug)]
struct Frame {
    /// The capture's packet (1-based, as tshark numbers them) where it ends.
    packet: usize,
    /// Its place among the frames ending in that packet.
    index: usize,
    request: bool,
    client: String,
    broker: String,
    size: usize,
    /// Requests: api key, version; both: the correlation id.
    api: i16,
    version: i16,
    correlation: i32,
}

#[derive(Default)]
struct Direction {
    next: Option<u32>,
    buffer: Vec<u8>,
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Bytes of frames cut short by a connection's end, by (client, broker).
type Cut = BTreeMap<(String, String), usize>;

/// The frames on `ports`, and the bytes left over (a frame cut short by a
/// connection's end).
fn naive_frames(file: &[u8], ports: &BTreeSet<u16>) -> (Vec<Frame>, Cut) {
    assert!(file.len() >= 24, "not a pcap file");
    let little = match &file[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        other => panic!("not a pcap file: magic {other:02x?}"),
    };
    let u32_at = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if little {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    assert_eq!(u32_at(&file[20..24]), 1, "tcpdump -i lo writes Ethernet");
    let mut directions: HashMap<(String, String), Direction> = HashMap::new();
    let mut cut = Cut::new();
    let mut frames = Vec::new();
    let mut at = 24;
    let mut packet = 0;
    while at + 16 <= file.len() {
        let captured = u32_at(&file[at + 8..at + 12]) as usize;
        let original = u32_at(&file[at + 12..at + 16]) as usize;
        assert_eq!(captured, original, "a packet cut by the snap length");
        let data = &file[at + 16..at + 16 + captured];
        at += 16 + captured;
        packet += 1;
        if data.len() < 34 || be16(&data[12..14]) != 0x0800 {
            continue;
        }
        let ip = &data[14..];
        let header = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(be16(&ip[2..4]));
        if ip[9] != 6 {
            continue;
        }
        let tcp = &ip[header..total];
        let (source, target) = (be16(&tcp[0..2]), be16(&tcp[2..4]));
        let request = ports.contains(&target);
        if !request && !ports.contains(&source) {
            continue;
        }
        let address = |b: &[u8], port: u16| format!("{}.{}.{}.{}:{port}", b[0], b[1], b[2], b[3]);
        let from = address(&ip[12..16], source);
        let to = address(&ip[16..20], target);
        let (client, broker) = if request {
            (from.clone(), to.clone())
        } else {
            (to.clone(), from.clone())
        };
        let seq = be32(&tcp[4..8]);
        let offset = usize::from(tcp[12] >> 4) * 4;
        let flags = tcp[13];
        let direction = directions.entry((from, to)).or_default();
        if flags & 0x02 != 0 {
            // SYN: a new connection on this pair of addresses.
            if !direction.buffer.is_empty() {
                *cut.entry((client.clone(), broker.clone())).or_default() += direction.buffer.len();
            }
            *direction = Direction {
                next: Some(seq.wrapping_add(1)),
                buffer: Vec::new(),
            };
            continue;
        }
        let mut payload = &tcp[offset..];
        if payload.is_empty() {
            continue;
        }
        let next = *direction.next.get_or_insert(seq);
        let ahead = seq.wrapping_sub(next) as i32;
        assert!(
            ahead <= 0,
            "packet {packet}: {ahead} bytes missing on loopback"
        );
        // A retransmission: only what is new.
        let old = ahead.unsigned_abs() as usize;
        if old >= payload.len() {
            continue;
        }
        payload = &payload[old..];
        direction.buffer.extend_from_slice(payload);
        direction.next = Some(next.wrapping_add(payload.len() as u32));
        let mut index = 0;
        while direction.buffer.len() >= 4 {
            let size = be32(&direction.buffer[..4]) as usize;
            if direction.buffer.len() < 4 + size {
                break;
            }
            let body: Vec<u8> = direction.buffer.drain(..4 + size).skip(4).collect();
            let (api, version, correlation) = if request {
                assert!(size >= 8, "packet {packet}: a request of {size} bytes");
                (
                    be16(&body[0..2]) as i16,
                    be16(&body[2..4]) as i16,
                    be32(&body[4..8]) as i32,
                )
            } else {
                assert!(size >= 4, "packet {packet}: a response of {size} bytes");
                (-1, -1, be32(&body[0..4]) as i32)
            };
            frames.push(Frame {
                packet,
                index,
                request,
                client: client.clone(),
                broker: broker.clone(),
                size,
                api,
                version,
                correlation,
            });
            index += 1;
        }
    }
    for ((from, to), direction) in directions {
        if !direction.buffer.is_empty() {
            let port = |a: &str| a.rsplit(':').next().and_then(|p| p.parse().ok());
            let key = if port(&to).is_some_and(|p| ports.contains(&p)) {
                (from, to)
            } else {
                (to, from)
            };
            *cut.entry(key).or_default() += direction.buffer.len();
        }
    }
    (frames, cut)
}

// ---------------------------------------------------------------------------
// Ours: kafka-protocol pcap.

/// What `kafka-protocol pcap` printed, by (client, broker, correlation id).
#[derive(Default)]
struct Ours {
    requests: HashMap<(String, String, i32), VecDeque<Value>>,
    responses: HashMap<(String, String, i32), VecDeque<Value>>,
    unanswered: HashMap<(String, String, i32), usize>,
    events: BTreeMap<String, usize>,
    cut: Cut,
    pre_votes: Vec<Value>,
    votes: usize,
    exchanges: usize,
}

fn kafka_protocol(args: &[&str]) -> String {
    let out = Command::new(built("kafka-protocol"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("kafka-protocol: {e}"));
    assert!(
        out.status.success(),
        "kafka-protocol {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

fn port_args(ports: &BTreeSet<u16>) -> Vec<String> {
    ports
        .iter()
        .flat_map(|p| ["--port".to_owned(), p.to_string()])
        .collect()
}

fn ours(file: &Path, ports: &BTreeSet<u16>) -> Ours {
    let mut args: Vec<String> = vec!["pcap".into()];
    args.extend(port_args(ports));
    args.push(file.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut ours = Ours::default();
    for line in kafka_protocol(&args).lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let text = |key: &str| value[key].as_str().unwrap_or_default().to_owned();
        if let Some(event) = value["event"].as_str() {
            *ours.events.entry(event.to_owned()).or_default() += 1;
            if event == "unanswered" {
                // "... request (correlation id N) never answered: ..."
                let detail = text("detail");
                let id = detail
                    .split("(correlation id ")
                    .nth(1)
                    .and_then(|rest| rest.split(')').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{line}"));
                *ours
                    .unanswered
                    .entry((text("client"), text("broker"), id))
                    .or_default() += 1;
            }
            if event == "undecodable" {
                // Only frames cut short: "the stream ends N bytes into a frame".
                let detail = text("detail");
                let bytes = detail
                    .strip_prefix("the stream ends ")
                    .and_then(|rest| rest.strip_suffix(" bytes into a frame"))
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or_else(|| panic!("{line}"));
                *ours
                    .cut
                    .entry((text("client"), text("broker")))
                    .or_default() += bytes;
            }
            continue;
        }
        let Some(id) = value["correlationId"].as_i64() else {
            // A legacy SASL token: none in these flows.
            panic!("neither an exchange nor an event: {line}");
        };
        let key = (text("client"), text("broker"), id as i32);
        ours.exchanges += 1;
        if value["api"] == "Vote" {
            ours.votes += 1;
            let partition = &value["request"]["topics"][0]["partitions"][0];
            if partition["preVote"] == true {
                ours.pre_votes.push(value.clone());
            }
        }
        if !value["response"].is_null() {
            ours.responses
                .entry(key.clone())
                .or_default()
                .push_back(value.clone());
        }
        ours.requests.entry(key).or_default().push_back(value);
    }
    ours
}

/// The api key of an exchange line.
fn api_key(exchange: &Value) -> i16 {
    let name = exchange["api"].as_str().unwrap_or_default();
    ApiKey::from_name(name)
        .unwrap_or_else(|| panic!("unknown api {name}"))
        .key()
}

/// Every string under a key `name`, `topic` or `topicName` that is one of
/// `topics`, at any depth.
fn topic_names(value: &Value, topics: &BTreeSet<String>, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if let (true, Some(name)) = (
                    ["name", "topic", "topicName"].contains(&key.as_str()),
                    value.as_str(),
                ) {
                    if topics.contains(name) {
                        into.insert(name.to_owned());
                    }
                }
                topic_names(value, topics, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| topic_names(v, topics, into)),
        _ => {}
    }
}

/// Every `errorCode` at any depth.
fn error_codes(value: &Value, into: &mut Vec<i64>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "errorCode" {
                    into.extend(value.as_i64());
                }
                error_codes(value, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| error_codes(v, into)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// tshark.

/// Every value of the tshark field `name` at any depth of a PDU's tree.
fn tshark_field(value: &Value, name: &str, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if key == name {
                    match value {
                        Value::String(s) => into.push(s.clone()),
                        Value::Array(items) => {
                            into.extend(items.iter().filter_map(|v| v.as_str().map(str::to_owned)));
                        }
                        _ => {}
                    }
                }
                tshark_field(value, name, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| tshark_field(v, name, into)),
        _ => {}
    }
}

fn tshark_number(pdu: &Value, name: &str) -> Option<i64> {
    match &pdu[name] {
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Why tshark's dissector cannot be held to a frame, if it cannot.
fn excluded(pdu: &Value) -> Option<&'static str> {
    let has = |tree: &str, field: &str| {
        pdu.get(tree)
            .is_some_and(|t| t.to_string().contains(&format!("\"{field}\"")))
    };
    if has("kafka.api_key_tree", "kafka.unknown_api_key") {
        return Some("api unknown to tshark");
    }
    if ["kafka.api_version_tree", "kafka.response.version_tree"]
        .iter()
        .any(|tree| has(tree, "kafka.unsupported_api_version"))
    {
        return Some("version newer than tshark's");
    }
    if pdu.get("kafka.api_key").is_none() {
        return Some("response to a request tshark did not match");
    }
    if pdu.to_string().contains("\"_ws.malformed\"") {
        return Some("malformed to tshark");
    }
    None
}

/// tshark's Kafka PDUs by packet number, in order within each packet.
fn tshark(file: &Path, ports: &BTreeSet<u16>) -> BTreeMap<usize, Vec<Value>> {
    let mut command = Command::new("tshark");
    command.arg("-r").arg(file).arg("-n");
    for port in ports {
        command.args(["-d", &format!("tcp.port=={port},kafka")]);
    }
    command.args(["-Y", "kafka", "-T", "json", "--no-duplicate-keys"]);
    let out = command.output().unwrap_or_else(|e| panic!("tshark: {e}"));
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let packets: Vec<Value> =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("tshark's JSON: {e}"));
    let mut pdus = BTreeMap::new();
    for packet in packets {
        let layers = &packet["_source"]["layers"];
        let number: usize = layers["frame"]["frame.number"]
            .as_str()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no frame number: {layers}"));
        let list = match &layers["kafka"] {
            Value::Array(items) => items.clone(),
            Value::Object(_) => vec![layers["kafka"].clone()],
            other => panic!("packet {number}: kafka is {other}"),
        };
        pdus.insert(number, list);
    }
    pdus
}

// ---------------------------------------------------------------------------
// The flows.

fn kcat(bootstrap: &str, topic: &str) {
    let lines: String = (0..RECORDS).map(|i| format!("kcat-{i}\n")).collect();
    let mut produce = Command::new("kcat")
        .args(["-b", bootstrap, "-t", topic, "-P", "-z", "lz4"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kcat: {e}"));
    produce
        .stdin
        .take()
        .unwrap_or_else(|| panic!("kcat's stdin"))
        .write_all(lines.as_bytes())
        .unwrap_or_else(|e| panic!("kcat: {e}"));
    let status = produce.wait().unwrap_or_else(|e| panic!("kcat: {e}"));
    assert!(status.success(), "kcat -P: {status}");
    let out = Command::new("kcat")
        .args([
            "-b",
            bootstrap,
            "-t",
            topic,
            "-C",
            "-o",
            "beginning",
            "-e",
            "-q",
        ])
        .output()
        .unwrap_or_else(|e| panic!("kcat: {e}"));
    assert!(
        out.status.success(),
        "kcat -C: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), lines, "kcat consumed");
}

/// DescribeQuorum at each of `ids`' controller listeners until one leads
/// at an epoch above `after`.
fn leader(kafka: &Kafka, ids: &[u32], after: i64) -> (u32, i64) {
    let body = r#"{"topics": [{"topicName": "__cluster_metadata", "partitions": [{"partitionIndex": 0}]}]}"#;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        for &id in ids {
            let address = kafka.get(&format!("node.{id}.controller"));
            let mut child = Command::new(built("kafka-protocol"))
                .args(["request", "--bootstrap", address, "--api", "DescribeQuorum"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("kafka-protocol: {e}"));
            let _ = child
                .stdin
                .take()
                .map(|mut stdin| stdin.write_all(body.as_bytes()));
            let mut out = String::new();
            let _ = child.stdout.take().map(|mut o| o.read_to_string(&mut out));
            if !child.wait().is_ok_and(|s| s.success()) {
                continue;
            }
            let answer: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
            let partition = &answer["topics"][0]["partitions"][0];
            if answer["errorCode"] != 0 || partition["errorCode"] != 0 {
                continue;
            }
            let epoch = partition["leaderEpoch"].as_i64().unwrap_or(-1);
            if partition["leaderId"] == id && epoch > after {
                return (id, epoch);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no leader among {ids:?} above epoch {after}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn port_of(address: &str) -> u16 {
    address
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {address}"))
}

// ---------------------------------------------------------------------------

#[test]
fn a_real_capture_of_real_kafka_read_by_ours_and_by_tshark() {
    let _one = one_at_a_time();
    for (program, arg) in [
        ("tcpdump", "--version"),
        ("tshark", "--version"),
        ("kcat", "-V"),
    ] {
        if !runs(program, arg) {
            return skip(&format!("`{program}` does not run"));
        }
    }
    let (Some(jvm), Some(kgo)) = (jvm(), kgo_flow()) else {
        return skip("Java or Go is missing");
    };
    let started = Instant::now();
    let dir = scratch("captures");
    let file = dir.join("kafka.pcap");
    let filter: Vec<&str> = ["tcp", "and"].into_iter().chain(PORTS.split(' ')).collect();
    let tcpdump = match Tcpdump::start(&file, &dir.join("tcpdump.err"), &filter) {
        Ok(tcpdump) => tcpdump,
        Err(why) => return skip(&format!("tcpdump cannot capture: {why}")),
    };
    let mut ports = BTreeSet::new();
    let mut topics: BTreeSet<String> = [
        "__consumer_offsets",
        "__transaction_state",
        "__cluster_metadata",
    ]
    .map(str::to_owned)
    .into();

    // Clients through one combined node.
    {
        let Some(kafka) = Kafka::start("captures", &pinned_version(), &[]) else {
            return skip("real Kafka cannot start");
        };
        let bootstrap = kafka.bootstrap();
        ports.insert(port_of(bootstrap));
        ports.insert(port_of(kafka.controller()));
        let outcome = run_java(jvm, bootstrap, "java-cap", RECORDS, None);
        check_flow(&outcome, RECORDS, bootstrap);
        let outcome = run_kgo_with(kgo, bootstrap, "kgo-cap", RECORDS, None, &["-transactions"]);
        check_flow(&outcome, RECORDS, bootstrap);
        assert_eq!(outcome["transactionsCommitted"], 1, "{outcome}");
        assert_eq!(outcome["transactionsAborted"], 1, "{outcome}");
        kcat(bootstrap, "kcat-cap-topic");
        topics.extend(["java-cap-topic", "kgo-cap-topic", "kcat-cap-topic"].map(str::to_owned));
        say(&format!(
            "captures: clients done at {:.1} s",
            started.elapsed().as_secs_f64()
        ));
    }

    // A quorum whose leader stops: a pre-vote, then a vote.
    let first_epoch;
    {
        let options = ["--controllers", "3", "--heap", "256m"];
        let Some(kafka) = Kafka::start("captures-quorum", &pinned_version(), &options) else {
            return skip("real Kafka cannot start");
        };
        for id in 1..=3 {
            ports.insert(port_of(kafka.get(&format!("node.{id}.controller"))));
        }
        let (first, epoch) = leader(&kafka, &[1, 2, 3], 0);
        first_epoch = epoch;
        kafka.stop_node(first);
        let alive: Vec<u32> = [1, 2, 3].into_iter().filter(|&id| id != first).collect();
        let (second, second_epoch) = leader(&kafka, &alive, epoch);
        say(&format!(
            "captures: quorum leader {first} (epoch {epoch}) stopped, {second} leads at epoch {second_epoch}, at {:.1} s",
            started.elapsed().as_secs_f64()
        ));
    }

    let report = tcpdump.stop();
    say(&format!(
        "captures: tcpdump: {}",
        report.trim().replace('\n', "; ")
    ));
    assert!(
        report.contains("\n0 packets dropped by kernel"),
        "tcpdump dropped packets: {report}"
    );
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));

    // Ours against the naive count.
    let (frames, cut) = naive_frames(&bytes, &ports);
    let total = frames.len();
    let mut ours = ours(&file, &ports);
    let mut by_key = ours.requests.clone();
    let mut decoded = 0;
    let mut unanswered = 0;
    for frame in &frames {
        let key = (
            frame.client.clone(),
            frame.broker.clone(),
            frame.correlation,
        );
        if frame.request {
            if let Some(exchange) = ours.requests.get_mut(&key).and_then(VecDeque::pop_front) {
                assert_eq!(
                    (api_key(&exchange), exchange["version"].as_i64()),
                    (frame.api, Some(i64::from(frame.version))),
                    "packet {}: {exchange}",
                    frame.packet
                );
                decoded += 1;
            } else if let Some(n) = ours.unanswered.get_mut(&key).filter(|n| **n > 0) {
                *n -= 1;
                unanswered += 1;
                decoded += 1;
            } else {
                panic!("packet {}: {frame:?} is not in ours", frame.packet);
            }
        } else if ours
            .responses
            .get_mut(&key)
            .and_then(VecDeque::pop_front)
            .is_some()
        {
            decoded += 1;
        } else {
            panic!("packet {}: {frame:?} is not in ours", frame.packet);
        }
    }
    // A frame cut short by its connection's end is `undecodable`, with as
    // many bytes as the naive reader has left over on that connection.
    assert_eq!(ours.cut, cut, "frames cut short");
    let others: BTreeMap<&String, &usize> = ours
        .events
        .iter()
        .filter(|(event, _)| !["unanswered", "undecodable"].contains(&event.as_str()))
        .collect();
    assert!(others.is_empty(), "events: {others:?}");
    assert!(
        ours.requests.values().all(VecDeque::is_empty),
        "exchanges the naive reader did not see"
    );
    assert_eq!(decoded, total);
    say(&format!(
        "captures: {} bytes, {total} Kafka frames on ports {ports:?} (frames cut short at connections' ends: {cut:?}); \
         ours: {} exchanges, {unanswered} requests unanswered as their connection closed, events {:?}",
        bytes.len(),
        ours.exchanges,
        ours.events
    ));
    assert!(ours.votes > 0, "no Vote in the capture");
    // After the first leader stopped: a pre-vote at its epoch or later.
    let after_stop: Vec<&Value> = ours
        .pre_votes
        .iter()
        .filter(|vote| {
            vote["request"]["topics"][0]["partitions"][0]["replicaEpoch"]
                .as_i64()
                .is_some_and(|epoch| epoch >= first_epoch)
        })
        .collect();
    assert!(
        !after_stop.is_empty(),
        "no Vote with preVote: true after the leader stopped: {:?}",
        ours.pre_votes
    );
    say(&format!(
        "captures: {} Vote exchanges, {} with preVote: true, {} of them after the leader stopped, such as {}",
        ours.votes,
        ours.pre_votes.len(),
        after_stop.len(),
        after_stop[0]
    ));

    // tshark beside it.
    let pdus = tshark(&file, &ports);
    let version = Command::new("tshark")
        .arg("--version")
        .output()
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .unwrap_or_default();
    say(&format!("captures: {version}"));
    let mut agreed = 0;
    let mut rules: BTreeMap<&str, usize> = BTreeMap::new();
    let mut not_dissected = 0;
    let mut per_version: BTreeMap<(i16, i16), usize> = BTreeMap::new();
    let mut requests_seen: HashMap<(String, String, i32), Value> = HashMap::new();
    for frame in &frames {
        let key = (
            frame.client.clone(),
            frame.broker.clone(),
            frame.correlation,
        );
        let exchange = if frame.request {
            let exchange = by_key.get_mut(&key).and_then(VecDeque::pop_front);
            if let Some(exchange) = &exchange {
                requests_seen.insert(key.clone(), exchange.clone());
            }
            exchange
        } else {
            requests_seen.remove(&key)
        };
        let Some(pdu) = pdus
            .get(&frame.packet)
            .and_then(|list| list.get(frame.index))
        else {
            not_dissected += 1;
            continue;
        };
        if let Some(rule) = excluded(pdu) {
            *rules.entry(rule).or_default() += 1;
            continue;
        }
        // An unanswered request has no line of its own; tshark is held to
        // the naive header then.
        let (api, version) = match &exchange {
            Some(exchange) => (
                api_key(exchange),
                exchange["version"].as_i64().unwrap_or(-1) as i16,
            ),
            None if frame.request => (frame.api, frame.version),
            None => panic!("packet {}: a response without its request", frame.packet),
        };
        let side = if frame.request { "request" } else { "response" };
        let theirs_version = if frame.request {
            tshark_number(pdu, "kafka.request.version")
        } else {
            tshark_number(pdu, "kafka.response.version")
        };
        let context = || {
            format!(
                "packet {} ({side} {api} v{version}): tshark {pdu}",
                frame.packet
            )
        };
        assert_eq!(
            tshark_number(pdu, "kafka.len"),
            Some(frame.size as i64),
            "{}",
            context()
        );
        assert_eq!(
            tshark_number(pdu, "kafka.api_key"),
            Some(i64::from(api)),
            "{}",
            context()
        );
        assert_eq!(theirs_version, Some(i64::from(version)), "{}", context());
        assert_eq!(
            tshark_number(pdu, "kafka.correlation_id"),
            Some(i64::from(frame.correlation)),
            "{}",
            context()
        );
        if let Some(exchange) = &exchange {
            let body = &exchange[side];
            let mut theirs = Vec::new();
            tshark_field(pdu, "kafka.topic_name", &mut theirs);
            let theirs: BTreeSet<String> = theirs.into_iter().collect();
            let mut mine = BTreeSet::new();
            topic_names(body, &topics, &mut mine);
            assert_eq!(theirs, mine, "topic names: {}\nours: {body}", context());
            let mut theirs = Vec::new();
            tshark_field(pdu, "kafka.error", &mut theirs);
            let mut theirs: Vec<i64> = theirs.iter().filter_map(|e| e.parse().ok()).collect();
            let mut mine = Vec::new();
            error_codes(body, &mut mine);
            theirs.sort_unstable();
            mine.sort_unstable();
            assert_eq!(theirs, mine, "error codes: {}\nours: {body}", context());
        }
        agreed += 1;
        *per_version.entry((api, version)).or_default() += 1;
    }
    let dissected = agreed;
    say(&format!(
        "tshark dissected {dissected} of {total} frames; ours decoded {decoded} of {total}; agreement on {agreed}"
    ));
    say(&format!(
        "captures: left out of the comparison by rule: {rules:?}; frames tshark showed no Kafka for: {not_dissected}"
    ));
    let versions: Vec<String> = per_version
        .iter()
        .map(|((api, version), n)| {
            let name = ApiKey::from_key(*api).map_or("?", ApiKey::name);
            format!("{name} v{version}: {n}")
        })
        .collect();
    say(&format!(
        "captures: agreement by api and version: {}",
        versions.join(", ")
    ));
    assert!(agreed > 0, "tshark agreed on no frame");
    say(&format!(
        "captures: {:.1} s in all",
        started.elapsed().as_secs_f64()
    ));
}
