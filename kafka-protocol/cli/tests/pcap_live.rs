//! `kafka-protocol pcap` on a real capture of `kafka-protocol fake`, taken
//! with tcpdump on loopback as a user takes one.
//!
//! The capture starts mid-connection, while the broker delays its answer
//! (`--fault api-versions:delay=3s:times=1`): the first bytes tcpdump sees
//! are the broker's answer to correlation id 7, then 8 to 10 are asked and
//! answered. The fake listens on a free port, so without `--port` nothing
//! but the bytes says which side is the client; the output must be the
//! one `--port` gives.
//!
//! Without tcpdump, or when it cannot capture (not root), it skips with a
//! message; `KAFKA_WIRE_REQUIRE_CAPTURE` (set by `.ci/run`) makes that a
//! failure.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use kafka_wire::messages::ApiVersionsRequest;
use kafka_wire_test_support::frames::{receive, request_bytes};
use kafka_wire_test_support::process::{run_with_input, Listening};
use kafka_wire_test_support::tcpdump::{self, Tcpdump};
use serde_json::Value;

/// The broker's delay of the first ApiVersions answer: long enough for
/// tcpdump to start listening before the answer leaves.
const DELAY: Duration = Duration::from_secs(3);

fn skip(why: &str) {
    assert!(
        std::env::var_os("KAFKA_WIRE_REQUIRE_CAPTURE").is_none(),
        "KAFKA_WIRE_REQUIRE_CAPTURE is set, but {why}"
    );
    eprintln!("skipped the live capture test: {why}; it needs tcpdump, run as root");
}

/// Sends ApiVersions v3 with `correlation_id` on `stream`.
fn send(stream: &mut TcpStream, correlation_id: i32) {
    let request = ApiVersionsRequest {
        client_software_name: "kafka-wire".into(),
        client_software_version: "0.1".into(),
        ..Default::default()
    };
    let bytes = request_bytes(3, correlation_id, "pcap-live", request.into());
    std::io::Write::write_all(stream, &bytes).expect("send");
}

/// The correlation id of the next answer on `stream`.
fn answered(stream: &mut TcpStream) -> i32 {
    let frame = receive(stream).expect("an answer");
    i32::from_be_bytes(frame[..4].try_into().expect("a correlation id"))
}

/// The lines of `kafka-protocol pcap ARGS FILE`, parsed.
fn pcap(args: &[&str], file: &str) -> Vec<Value> {
    let mut all = vec!["pcap"];
    all.extend(args);
    all.push(file);
    let out = run_with_input(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol")).args(&all),
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{all:?}: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn a_capture_that_starts_with_the_brokers_answer_reads_as_with_its_port() {
    if !tcpdump::available() {
        return skip("`tcpdump --version` does not run");
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pcap-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let file = dir.join("fake.pcap");
    let delay = format!("api-versions:delay={}s:times=1", DELAY.as_secs());
    let fake = Listening::start(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol")).args([
            "fake",
            "--brokers",
            "1",
            "--fault",
            &delay,
        ]),
        &dir.join("fake.err"),
    );
    let address = fake.address().to_owned();
    let port = address.rsplit(':').next().expect("a port").to_owned();

    let mut stream = TcpStream::connect(&address).expect("connect");
    stream
        .set_read_timeout(Some(DELAY * 3))
        .expect("a read timeout");
    let asked = Instant::now();
    send(&mut stream, 7);
    let filter = ["tcp", "port", port.as_str()];
    let tcpdump = match Tcpdump::start(&file, &dir.join("tcpdump.err"), &filter) {
        Ok(tcpdump) => tcpdump,
        Err(why) => return skip(&format!("tcpdump cannot capture: {why}")),
    };
    assert!(
        asked.elapsed() < DELAY,
        "tcpdump took {:?} to listen, longer than the broker's delay",
        asked.elapsed()
    );
    assert_eq!(answered(&mut stream), 7);
    for id in 8..=10 {
        send(&mut stream, id);
        assert_eq!(answered(&mut stream), id);
    }
    drop(stream);
    // The connection's end reaches tcpdump before it stops.
    std::thread::sleep(Duration::from_millis(300));
    let report = tcpdump.stop();
    drop(fake);

    let file = file.to_str().expect("a UTF-8 path");
    let with_port = pcap(&["--port", &port], file);
    let without = pcap(&[], file);
    let brief = |lines: &[Value]| -> Vec<String> {
        lines
            .iter()
            .map(|line| match line["event"].as_str() {
                Some(event) => format!("{event}: {}", line["detail"]),
                None => format!("{} #{}", line["api"], line["correlationId"]),
            })
            .collect()
    };
    // With the port: the answer to 7, whose request was not captured, is
    // skipped; 8 to 10 are exchanges.
    let expected = brief(&with_port);
    assert_eq!(expected.len(), 4, "{expected:?}\ntcpdump: {report}");
    assert!(expected[0].starts_with("resync: "), "{expected:?}");
    assert_eq!(
        expected[1..],
        [
            "\"ApiVersions\" #8",
            "\"ApiVersions\" #9",
            "\"ApiVersions\" #10"
        ]
    );
    // Without it, the same lines, found by the rule that is sure.
    assert_eq!(brief(&without), expected);
    assert!(without == with_port, "the same lines, to the byte");
    assert_eq!(without[1]["broker"].as_str(), Some(address.as_str()));
    let _ = std::fs::remove_dir_all(&dir);
}
