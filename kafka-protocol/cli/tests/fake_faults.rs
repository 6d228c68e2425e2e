//! `kafka-protocol fake --fault/--control/--seed`: specs on the command
//! line, the control round trip, and the `faults` line on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use kafka_wire::messages::{produce_request, ProduceRequest};
use kafka_wire::{ErrorCode, RequestBody, ResponseBody};
use kafka_wire_fake::probe::Probe;

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
}

#[test]
fn the_eight_specs_are_accepted_and_a_bad_one_is_a_usage_error() {
    let good = [
        "produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.05",
        "fetch:delay=200ms:times=10",
        "*:delay=0ms..50ms",
        "metadata:drop-before:times=1",
        "produce:drop-after:rate=0.01",
        "every=500ms:move-leaders",
        "every=10s:stop-broker:for=3s",
        "every=5s:move-coordinator",
    ];
    for spec in good {
        assert!(
            kafka_wire_fake::control::FaultSpec::parse(spec).is_ok(),
            "{spec}"
        );
    }
    let output = binary()
        .args(["fake", "--fault", "produce:error=NO_SUCH_ERROR"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("fault `produce:error=NO_SUCH_ERROR`"),
        "{stderr}"
    );
}

fn produce() -> RequestBody<'static> {
    produce_from(None)
}

/// A Produce of one record to partition 0 of `t`, from producer
/// (id, epoch, first sequence) when given.
fn produce_from(producer: Option<(i64, i16, i32)>) -> RequestBody<'static> {
    let mut b = kafka_wire_records::RecordBatchBuilder::new(0);
    if let Some((id, epoch, sequence)) = producer {
        b = b
            .producer_id(id)
            .producer_epoch(epoch)
            .base_sequence(sequence);
    }
    assert!(b.append(1_000, None, Some(b"v"), &[]).is_ok());
    RequestBody::Produce(ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![produce_request::TopicProduceData {
            name: "t".into(),
            partition_data: vec![produce_request::PartitionProduceData {
                index: 0,
                records: Some(b.build().unwrap_or_default().into()),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    })
}

#[test]
fn control_round_trip_and_the_faults_line_on_sigterm() {
    let mut child = binary()
        .args([
            "fake",
            "--brokers",
            "1",
            "--topic",
            "t:1",
            "--seed",
            "7",
            "--fault",
            "produce:error=NOT_LEADER_OR_FOLLOWER:times=2",
            "--control",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("bootstrap");
    let bootstrap = line
        .trim()
        .strip_prefix("bootstrap ")
        .expect("a bootstrap line")
        .to_owned();
    let mut ask = |command: &str| {
        writeln!(stdin, "{command}").expect("write");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("answer");
        serde_json::from_str::<serde_json::Value>(&answer).expect("JSON")
    };
    let answer = ask(r#"{"id": 1, "cmd": "leader", "topic": "t", "partition": 0}"#);
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["leader_epoch"], 0);
    let answer = ask(r#"{"id": 2, "cmd": "fault", "spec": "metadata:delay=1ms:times=1"}"#);
    assert_eq!(answer["ok"], true, "{answer}");
    let answer = ask(r#"{"id": 3, "cmd": "stop-broker", "broker": 5}"#);
    assert_eq!(answer["id"], 3);
    assert!(answer["error"].is_string(), "{answer}");
    let answer = ask(r#"{"id": 4, "cmd": "move-coordinator", "key": "g"}"#);
    assert!(answer["error"].is_string(), "one broker: nowhere to move");

    let codes = produce_codes_at(&bootstrap, vec![produce(), produce(), produce()]);
    let not_leader = ErrorCode::NotLeaderOrFollower.code();
    assert_eq!(codes, [not_leader, not_leader, 0]);
    let answer = ask(r#"{"id": 5, "cmd": "counts"}"#);
    assert_eq!(answer["faults"]["error"], 2);

    drop(stdin);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    assert!(
        stderr.lines().any(|l| l
            == "faults error=2,delay=0,hang=0,drop-before=0,drop-after=0,move-leaders=0,move-coordinator=0,stop-broker=0,restart-broker=0,drop-after-records=0"),
        "{stderr}"
    );
}

/// The error code of each Produce `requests` gets from a fresh
/// `kafka-protocol fake --brokers 1 --topic t:1` given `flags`.
fn produce_codes(flags: &[&str], requests: Vec<RequestBody<'static>>) -> Vec<i16> {
    let mut child = binary()
        .args(["fake", "--brokers", "1", "--topic", "t:1"])
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("bootstrap");
    let bootstrap = line.trim().trim_start_matches("bootstrap ").to_owned();
    let codes = produce_codes_at(&bootstrap, requests);
    let _ = child.kill();
    let _ = child.wait();
    codes
}

/// The partition error codes of each Produce `requests` gets from the
/// cluster at `bootstrap`, in order, over one connection (Produce v9).
fn produce_codes_at(bootstrap: &str, requests: Vec<RequestBody<'static>>) -> Vec<i16> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut probe = Probe::connect(bootstrap).await.expect("connect");
        let mut codes = Vec::new();
        for request in requests {
            match probe.request(request, 9).await {
                Ok(ResponseBody::Produce(r)) => codes.extend(
                    r.responses
                        .iter()
                        .flat_map(|t| t.into_owned().partition_responses.into_vec())
                        .map(|p| p.error_code),
                ),
                other => panic!("{other:?}"),
            }
        }
        codes
    })
}

#[test]
fn first_sequence_from_zero_refuses_a_first_batch_past_zero_on_a_new_partition() {
    let past_zero = || vec![produce_from(Some((7, 0, 5))), produce_from(Some((8, 0, 0)))];
    assert_eq!(
        produce_codes(&[], past_zero()),
        [0, 0],
        "Kafka 4.4.0's rule"
    );
    let out_of_order = ErrorCode::OutOfOrderSequenceNumber.code();
    assert_eq!(
        produce_codes(&["--first-sequence-from-zero"], past_zero()),
        [out_of_order, 0]
    );
}
