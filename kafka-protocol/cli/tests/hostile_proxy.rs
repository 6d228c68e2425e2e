//! `kafka-protocol proxy` under hostile traffic, in front of real Kafka
//! 4.4.0 (started by `tests/kafka/broker.sh`), with the proxy alone under a
//! 1 GiB address-space limit.
//!
//! Each attack that sends requests is played twice: straight to Kafka, then
//! through the proxy. The proxy must give the client what Kafka gives it:
//! the same answers, or the connection closed where Kafka closes it. It
//! must never wait for an answer Kafka does not send. The attacks that only
//! hold a connection (a size prefix, half a frame, an idle socket) must be
//! closed by the proxy's idle timeout. Fifty attack connections run at
//! once, while an ordinary client produces and consumes through the proxy
//! and must lose nothing.
//!
//! Skips without Java, Maven or the broker's jars in ~/.m2, unless
//! `KAFKA_WIRE_REQUIRE_JAVA` is set.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use kafka_wire::frame::{read_frame, ReadFrameError, ResponseFrame, DEFAULT_MAX_FRAME_SIZE};
use kafka_wire::messages::{
    create_topics_request, fetch_request, produce_request, CreateTopicsRequest, FetchRequest,
    MetadataRequest, ProduceRequest,
};
use kafka_wire::{ApiKey, ResponseBody};
use kafka_wire_records::{Batch, Batches, DecodeOptions, RecordBatchBuilder};
use kafka_wire_test_support::attack::{
    with_address_space_limit, ADDRESS_SPACE_LIMIT, CLAIM_100_MIB,
};
use kafka_wire_test_support::frames::{receive, request_bytes, send_request};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_test_support::process::Listening;
use kafka_wire_test_support::wire::Wire;

/// The correlation id of the ordinary Metadata request that follows each
/// attack: it must be answered unless Kafka closed the connection first.
const PROBE: i32 = 999_999;

/// The proxy's idle timeout in this suite, in seconds.
const IDLE_SECONDS: u64 = 3;

/// The proxy's log line cap in this suite, in bytes.
const MAX_LINE: usize = 256 * 1024;

/// What a client saw: the correlation ids answered, in order, and whether
/// the connection was closed at the end (else the probe was answered).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    answered: Vec<i32>,
    closed: bool,
}

/// An attack on one connection: its bytes, then the probe.
struct Attack {
    name: &'static str,
    bytes: Vec<u8>,
}

/// A request frame written by hand: header fields, then `body`.
fn raw_request(
    api: ApiKey,
    version: i16,
    correlation_id: i32,
    header_tail: &[u8],
    body: &[u8],
) -> Vec<u8> {
    let frame = Wire::new()
        .i16(api.key())
        .i16(version)
        .i32(correlation_id)
        .raw(header_tail)
        .raw(body)
        .bytes();
    Wire::new().i32(frame.len() as i32).raw(&frame).bytes()
}

fn probe() -> Vec<u8> {
    request_bytes(12, PROBE, "probe", MetadataRequest::default().into())
}

/// The attacks that send requests, each followed by the probe.
fn request_attacks() -> Vec<Attack> {
    // Produce v3 with acks = 0, whose client id and transactional id are
    // not UTF-8 (Kafka replaces such bytes): handled, never answered.
    let not_utf8 = raw_request(
        ApiKey::Produce,
        3,
        1,
        &[0x00, 0x02, 0xc3, 0x28],
        &Wire::new()
            .raw(&[0x00, 0x01, 0xff])
            .i16(0)
            .i32(1000)
            .i32(0)
            .bytes(),
    );
    // Metadata v4 with a topics count of -2: null, all topics, for Kafka.
    let negative_null = raw_request(
        ApiKey::Metadata,
        4,
        2,
        &[0x00, 0x01, b'c'],
        &Wire::new().i32(-2).i8(0).bytes(),
    );
    // Produce v2, which Kafka 4 advertises and refuses by closing.
    let produce_v2 = raw_request(
        ApiKey::Produce,
        2,
        3,
        &[0x00, 0x01, b'c'],
        &Wire::new().i16(1).i32(1000).i32(0).bytes(),
    );
    // 10,000 pipelined Produce requests with acks = 0 and no topics.
    let mut pipelined = Vec::new();
    for correlation_id in 0..10_000 {
        pipelined.extend(request_bytes(
            9,
            correlation_id,
            "pipelined",
            ProduceRequest {
                acks: 0,
                timeout_ms: 1000,
                ..Default::default()
            }
            .into(),
        ));
    }
    // An api key no one knows.
    let unknown_api = Wire::new()
        .i32(10)
        .i16(0x7f00)
        .i16(0)
        .i32(4)
        .i16(-1)
        .bytes();
    // A Metadata v12 body cut short.
    let truncated = raw_request(ApiKey::Metadata, 12, 5, &[0x00, 0x01, b'c', 0x00], &[0x05]);
    // Metadata v12 whose header repeats an unknown tag, as Kafka keeps.
    let duplicate_tags = raw_request(
        ApiKey::Metadata,
        12,
        6,
        &[0x00, 0x01, b'c', 0x02, 0x63, 0x01, 0xaa, 0x63, 0x01, 0xbb],
        &[0x01, 0x01, 0x00, 0x00],
    );
    // An acks = 0 Produce of about 300 kB of tiny partition entries for a
    // topic that does not exist: the proxy logs it without decoding it
    // (it is over the line cap this suite sets); Kafka closes the
    // connection, as it does for an acks = 0 Produce that fails.
    let partitions = (0..50_000)
        .map(|index| produce_request::PartitionProduceData {
            index,
            ..Default::default()
        })
        .collect::<Vec<_>>();
    let big = request_bytes(
        9,
        7,
        "big",
        ProduceRequest {
            acks: 0,
            timeout_ms: 1000,
            topic_data: vec![produce_request::TopicProduceData {
                name: "no-such-topic".into(),
                partition_data: partitions.into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
        .into(),
    );
    vec![
        Attack {
            name: "not-utf8-acks-0",
            bytes: not_utf8,
        },
        Attack {
            name: "negative-null",
            bytes: negative_null,
        },
        Attack {
            name: "produce-v2",
            bytes: produce_v2,
        },
        Attack {
            name: "pipelined-acks-0",
            bytes: pipelined,
        },
        Attack {
            name: "unknown-api",
            bytes: unknown_api,
        },
        Attack {
            name: "truncated-body",
            bytes: truncated,
        },
        Attack {
            name: "duplicate-tags",
            bytes: duplicate_tags,
        },
        Attack {
            name: "big-acks-0",
            bytes: big,
        },
    ]
}

/// An IncrementalAlterConfigs whose values Kafka's request log hides: a
/// broker's `sasl.jaas.config` and a listener's keystore password, a
/// group's config Kafka does not know; and one it shows, a topic's
/// `retention.ms`.
fn secret_configs() -> Attack {
    use kafka_wire::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    use kafka_wire::messages::IncrementalAlterConfigsRequest;
    let config = |name: &str, value: &str| AlterableConfig {
        name: name.to_owned().into(),
        config_operation: 0,
        value: Some(value.to_owned().into()),
        ..Default::default()
    };
    let resource = |resource_type: i8, resource_name: &str, configs| AlterConfigsResource {
        resource_type,
        resource_name: resource_name.to_owned().into(),
        configs,
        ..Default::default()
    };
    let body = IncrementalAlterConfigsRequest {
        resources: vec![
            resource(
                4,
                "1",
                vec![
                    config("sasl.jaas.config", "hunter2-jaas"),
                    config(
                        "listener.name.plaintext.ssl.keystore.password",
                        "hunter2-keystore",
                    ),
                ]
                .into(),
            ),
            resource(2, TOPIC, vec![config("retention.ms", "7")].into()),
            resource(
                32,
                "group",
                vec![config("no.such.config", "hunter2-group")].into(),
            ),
        ]
        .into(),
        validate_only: true,
        ..Default::default()
    };
    Attack {
        name: "secret-configs",
        bytes: request_bytes(1, 8, "secrets", body.into()),
    }
}

/// Plays `attack` then the probe on a new connection to `address`, and
/// reads until the probe is answered or the connection closes. A client
/// left waiting 60 seconds is a stall, and fails.
fn play(address: &str, attack: &Attack) -> Outcome {
    let mut stream = TcpStream::connect(address).unwrap_or_else(|e| panic!("{address}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut bytes = attack.bytes.clone();
    bytes.extend(probe());
    // Written from a thread: a peer that closes early must not block us.
    let writing = thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    });
    let mut answered = Vec::new();
    let closed = loop {
        match read_frame(&mut stream, DEFAULT_MAX_FRAME_SIZE) {
            Ok(Some(frame)) => {
                let id = i32::from_be_bytes(frame[..4].try_into().unwrap());
                answered.push(id);
                if id == PROBE {
                    break false;
                }
            }
            Ok(None) | Err(ReadFrameError::Truncated { .. }) => break true,
            Err(ReadFrameError::Io(e))
                if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) =>
            {
                break true
            }
            Err(e) => panic!("{}: stalled or broken through {address}: {e}", attack.name),
        }
    };
    let _ = writing.join();
    Outcome { answered, closed }
}

/// The proxy under test, with the log it writes.
struct Proxy {
    server: Listening,
    address: String,
    log: PathBuf,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_kafka-protocol"));
        let log = std::env::temp_dir().join(format!("hostile-proxy-{}.log", std::process::id()));
        let mut command = with_address_space_limit(&binary, ADDRESS_SPACE_LIMIT);
        command
            .args(["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream])
            .args(["--idle-timeout", &IDLE_SECONDS.to_string()])
            .args(["--log-max-line", &MAX_LINE.to_string(), "--log"])
            .arg(&log);
        let server = Listening::start(&mut command, &log.with_extension("err"));
        Proxy {
            address: server.address().to_owned(),
            server,
            log,
        }
    }

    /// The first line of the log that `wanted` picks, waiting up to ten
    /// seconds for it (the log is written by a thread of its own).
    fn log_line(&self, wanted: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let found = text.lines().find(|l| wanted(l)).map(str::to_owned);
            if found.is_some() || Instant::now() > deadline {
                return found;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGTERM; the exit status and standard error.
    fn stop(self) -> (Option<i32>, String) {
        self.server.stop()
    }
}

/// Holds a connection the way an attacker parks one: `bytes` and then
/// nothing. The proxy must close it within its idle timeout (and slack).
fn parked(address: &str, bytes: &[u8]) -> Duration {
    let started = Instant::now();
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(bytes).unwrap();
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        other => panic!("a parked connection was not closed: {other:?}"),
    }
    started.elapsed()
}

const TOPIC: &str = "hostile-ordinary";
const BATCHES: i32 = 100;
const RECORDS: i32 = 10;

/// Produces `BATCHES` batches of `RECORDS` records with acks = -1 through
/// `address`, then fetches them all back: every record must come back
/// once, in order.
fn ordinary_client(address: &str) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    for batch in 0..BATCHES {
        let mut builder = RecordBatchBuilder::new(0);
        for record in 0..RECORDS {
            let value = format!("value-{batch}-{record}");
            builder
                .append(1_700_000_000_000, None, Some(value.as_bytes()), &[])
                .unwrap();
        }
        let records = builder.build().unwrap();
        send_request(
            &mut stream,
            9,
            batch,
            "ordinary",
            ProduceRequest {
                acks: -1,
                timeout_ms: 10_000,
                topic_data: vec![produce_request::TopicProduceData {
                    name: TOPIC.into(),
                    partition_data: vec![produce_request::PartitionProduceData {
                        index: 0,
                        records: Some(records.into()),
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }
            .into(),
        );
        let frame = receive(&mut stream).expect("a produce answer");
        let response = ResponseFrame::decode(&frame, ApiKey::Produce, 9).unwrap();
        let ResponseBody::Produce(produce) = response.body else {
            panic!()
        };
        let partition = produce.responses.iter().next().unwrap().into_owned();
        let partition = partition
            .partition_responses
            .iter()
            .next()
            .unwrap()
            .into_owned();
        assert_eq!(partition.error_code, 0, "batch {batch}");
    }
    let mut values = Vec::new();
    let mut offset = 0i64;
    let deadline = Instant::now() + Duration::from_secs(30);
    while values.len() < (BATCHES * RECORDS) as usize && Instant::now() < deadline {
        send_request(
            &mut stream,
            12,
            1_000 + values.len() as i32,
            "ordinary",
            FetchRequest {
                max_wait_ms: 100,
                max_bytes: 1 << 20,
                topics: vec![fetch_request::FetchTopic {
                    topic: TOPIC.into(),
                    partitions: vec![fetch_request::FetchPartition {
                        partition: 0,
                        fetch_offset: offset,
                        partition_max_bytes: 1 << 20,
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }
            .into(),
        );
        let frame = receive(&mut stream).expect("a fetch answer");
        let response = ResponseFrame::decode(&frame, ApiKey::Fetch, 12).unwrap();
        let ResponseBody::Fetch(fetch) = response.body else {
            panic!()
        };
        for topic in fetch.responses.iter() {
            for partition in topic.into_owned().partitions.iter() {
                let partition = partition.into_owned();
                assert_eq!(partition.error_code, 0);
                let Some(records) = partition.records else {
                    continue;
                };
                for batch in Batches::new(&records, &DecodeOptions::default()) {
                    let Batch::V2(batch) = batch.unwrap() else {
                        panic!("a legacy batch")
                    };
                    for (delta, record) in batch.records().enumerate() {
                        let record = record.unwrap();
                        let at = batch.header().base_offset + delta as i64;
                        if at < offset {
                            continue;
                        }
                        values.push(String::from_utf8(record.value.unwrap().to_vec()).unwrap());
                        offset = at + 1;
                    }
                }
            }
        }
    }
    let expected: Vec<String> = (0..BATCHES)
        .flat_map(|b| (0..RECORDS).map(move |r| format!("value-{b}-{r}")))
        .collect();
    assert_eq!(
        values, expected,
        "the ordinary client lost or reordered records"
    );
}

#[test]
fn fifty_hostile_connections_and_an_ordinary_client_through_the_proxy() {
    let _one = one_at_a_time();
    let Some(kafka) = Kafka::start("hostile-proxy", &pinned_version(), &[]) else {
        return;
    };
    let mut stream = TcpStream::connect(kafka.bootstrap()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    send_request(
        &mut stream,
        7,
        1,
        "setup",
        CreateTopicsRequest {
            topics: vec![create_topics_request::CreatableTopic {
                name: TOPIC.into(),
                num_partitions: 1,
                replication_factor: 1,
                ..Default::default()
            }]
            .into(),
            timeout_ms: 10_000,
            ..Default::default()
        }
        .into(),
    );
    receive(&mut stream).expect("a CreateTopics answer");

    // What Kafka itself does with each attack.
    let attacks = request_attacks();
    let reference: Vec<Outcome> = attacks.iter().map(|a| play(kafka.bootstrap(), a)).collect();
    for (attack, outcome) in attacks.iter().zip(&reference) {
        println!("kafka: {}: {outcome:?}", attack.name);
    }

    let proxy = Proxy::start(kafka.bootstrap());
    let address = proxy.address.clone();
    // The big Produce alone first: its log line, over the cap, keeps the
    // request as a marker (later, with fifty connections, the log may drop
    // lines).
    assert_eq!(
        play(&address, &attacks[7]),
        reference[7],
        "big-acks-0 alone"
    );
    let marker = proxy
        .log_line(|l| l.contains("<truncated: "))
        .expect("the big Produce is logged with its body truncated");
    assert!(marker.len() <= MAX_LINE, "{}", marker.len());
    assert!(marker.contains(r#""api":"Produce""#), "{marker}");
    // Secrets in configurations, as Kafka's own request log hides them.
    let secrets = secret_configs();
    assert_eq!(
        play(&address, &secrets),
        play(kafka.bootstrap(), &secrets),
        "{}",
        secrets.name
    );
    let line = proxy
        .log_line(|l| l.contains("IncrementalAlterConfigs"))
        .expect("the IncrementalAlterConfigs exchange is logged");
    for secret in ["hunter2-jaas", "hunter2-keystore", "hunter2-group"] {
        assert!(!line.contains(secret), "{secret} in the log: {line}");
    }
    assert_eq!(line.matches("<redacted: ").count(), 3, "{line}");
    assert!(
        line.contains(r#""value":"7""#),
        "a topic config Kafka knows is shown: {line}"
    );
    thread::scope(|scope| {
        let ordinary = scope.spawn(|| ordinary_client(&address));
        let mut attackers = Vec::new();
        for n in 0..50 {
            let address = &address;
            let attacks = &attacks;
            let reference = &reference;
            // The two heavy attacks once each, so that Kafka itself keeps
            // up; the others spread over the fifty connections.
            let kind = match n {
                3 => 3,
                7 => 7,
                n => [0, 1, 2, 4, 5, 6, 8, 9, 10][n % 9],
            };
            attackers.push(scope.spawn(move || match kind {
                0..=7 => {
                    let outcome = play(address, &attacks[kind]);
                    assert_eq!(
                        outcome, reference[kind],
                        "{}: through the proxy, against Kafka",
                        attacks[kind].name
                    );
                }
                8 => {
                    let waited = parked(address, &CLAIM_100_MIB);
                    assert!(waited < Duration::from_secs(IDLE_SECONDS * 3), "{waited:?}");
                }
                9 => {
                    let half = Wire::new().i32(50).raw(&[0; 20]).bytes();
                    let waited = parked(address, &half);
                    assert!(waited < Duration::from_secs(IDLE_SECONDS * 3), "{waited:?}");
                }
                _ => {
                    let waited = parked(address, &[]);
                    assert!(
                        waited >= Duration::from_secs(IDLE_SECONDS - 1),
                        "{waited:?}"
                    );
                    assert!(waited < Duration::from_secs(IDLE_SECONDS * 3), "{waited:?}");
                }
            }));
        }
        for attacker in attackers {
            attacker
                .join()
                .unwrap_or_else(|_| panic!("an attack failed"));
        }
        ordinary
            .join()
            .unwrap_or_else(|_| panic!("the ordinary client failed"));
    });

    let log = proxy.log.clone();
    let (code, stderr) = proxy.stop();
    assert_eq!(
        code,
        Some(0),
        "the proxy did not exit 0 on SIGTERM: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    for line in text.lines() {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(value.is_object(), "{line}");
        assert!(line.len() <= MAX_LINE, "a log line of {} bytes", line.len());
    }
}
