//! `kafka-protocol fake`: `versions` and `request` against it, and with
//! `--sasl MECHANISM:USER:PASSWORD` every listener requires SASL. Before authenticating a connection gets ApiVersions and
//! SaslHandshake only (Metadata closes it); after PLAIN it is served.

use kafka_wire::IntoOwned;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    MetadataRequest, RequestHeader, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_wire::{RequestBody, ResponseBody};
use serde_json::Value;

mod common;
use common::{check_versions, kafka_protocol, request};

/// The fake, killed when dropped.
struct Fake(Child);

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends one request; the decoded answer, or `None` when the connection
/// closes instead.
fn call(
    stream: &mut TcpStream,
    body: RequestBody<'_>,
    version: i16,
) -> Option<ResponseBody<'static>> {
    let api = body.api_key();
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: api.key(),
            request_api_version: version,
            correlation_id: 7,
            client_id: Some("cli-fake-test".into()),
            ..Default::default()
        },
        body,
    };
    let mut bytes = Vec::new();
    frame.encode(&mut bytes).expect("encode");
    let size = i32::try_from(bytes.len()).expect("size");
    stream.write_all(&size.to_be_bytes()).ok()?;
    stream.write_all(&bytes).ok()?;
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).ok()?;
    let mut answer = vec![0u8; usize::try_from(i32::from_be_bytes(size)).expect("size")];
    stream.read_exact(&mut answer).ok()?;
    let response = ResponseFrame::decode(&answer, api, version).expect("decode");
    Some(response.body.into_owned())
}

/// Starts `kafka-protocol fake` with `args`; the fake and its bootstrap
/// line's addresses.
fn start(args: &[&str]) -> (Fake, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
        .arg("fake")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let fake = Fake(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("bootstrap line");
    let address = line
        .trim()
        .strip_prefix("bootstrap ")
        .expect("bootstrap")
        .to_owned();
    (fake, address)
}

/// `versions` and `request` against the fake, as against real Kafka
/// (`real_kafka.rs`): every api it advertises is known, the table and the
/// JSON agree, and a request round-trips.
#[test]
fn versions_and_request_against_the_fake() {
    let (fake, address) = start(&["--brokers", "1", "--topic", "cli-topic:2"]);
    let apis = check_versions(&address);
    let json: Value = serde_json::from_str(&kafka_protocol(
        &["versions", "--bootstrap", &address, "--json"],
        "",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let advertised = json
        .as_array()
        .into_iter()
        .flatten()
        .filter(|row| !row["broker_max"].is_null())
        .count();
    assert_eq!(apis, advertised);
    assert!(apis > 30, "{apis}");
    let metadata = request(&address, "Metadata", r#"{"topics": null}"#);
    let topics = metadata["topics"].as_array().cloned().unwrap_or_default();
    let topic = topics.iter().find(|t| t["name"] == "cli-topic");
    let partitions = topic.map(|t| t["partitions"].as_array().map_or(0, Vec::len));
    assert_eq!(partitions, Some(2), "{metadata}");
    drop(fake);
}

#[test]
fn with_sasl_every_listener_requires_it() {
    let (fake, address) = start(&["--brokers", "1", "--sasl", "PLAIN:alice:pw-1"]);
    let connect = || {
        let stream = TcpStream::connect(&address).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream
    };

    // Metadata before authentication closes the connection.
    let mut stream = connect();
    assert!(call(&mut stream, MetadataRequest::default().into(), 1).is_none());

    // PLAIN, then Metadata is served.
    let mut stream = connect();
    let handshake = SaslHandshakeRequest {
        mechanism: "PLAIN".into(),
    };
    match call(&mut stream, handshake.into(), 1) {
        Some(ResponseBody::SaslHandshake(r)) => {
            assert_eq!(r.error_code, 0);
            assert_eq!(r.mechanisms, ["PLAIN"]);
        }
        other => panic!("{other:?}"),
    }
    let token = SaslAuthenticateRequest {
        auth_bytes: b"\0alice\0pw-1".to_vec().into(),
        ..Default::default()
    };
    match call(&mut stream, token.into(), 2) {
        Some(ResponseBody::SaslAuthenticate(r)) => assert_eq!(r.error_code, 0),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        call(&mut stream, MetadataRequest::default().into(), 1),
        Some(ResponseBody::Metadata(_))
    ));
    drop(fake);
}

/// `--node-id`, `--advertise` and `--rack`: the bootstrap line lists where
/// the brokers listen; Metadata through one of them names each broker by
/// its chosen id at its advertised address, with its rack.
#[test]
fn brokers_with_chosen_ids_advertised_elsewhere() {
    let (fake, address) = start(&[
        "--brokers",
        "2",
        "--node-id",
        "1",
        "--node-id",
        "2",
        "--advertise",
        "1=127.0.0.1:29091",
        "--advertise",
        "2=[::1]:29092",
        "--rack",
        "2=east",
    ]);
    let listening: Vec<&str> = address.split(',').collect();
    assert_eq!(listening.len(), 2, "{address}");
    assert!(!listening.contains(&"127.0.0.1:29091"), "{address}");
    let metadata = request(listening[1], "Metadata", r#"{"topics": []}"#);
    let brokers: Vec<(i64, String, i64, Value)> = metadata["brokers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            (
                b["nodeId"].as_i64().unwrap_or(-1),
                b["host"].as_str().unwrap_or_default().to_owned(),
                b["port"].as_i64().unwrap_or(-1),
                b["rack"].clone(),
            )
        })
        .collect();
    assert_eq!(
        brokers,
        [
            (1, "127.0.0.1".to_owned(), 29091, Value::Null),
            (2, "::1".to_owned(), 29092, Value::from("east")),
        ],
        "{metadata}"
    );
    drop(fake);
}

/// Flags that name no broker, or one id twice, are usage errors (exit 2).
#[test]
fn node_ids_and_advertised_addresses_must_fit_the_brokers() {
    for args in [
        &["--brokers", "2", "--node-id", "1"][..],
        &["--brokers", "2", "--node-id", "1", "--node-id", "1"],
        &["--brokers", "2", "--advertise", "5=127.0.0.1:1"],
        &["--brokers", "2", "--advertise", "0=127.0.0.1"],
        &["--brokers", "2", "--advertise", "0=127.0.0.1:0"],
        &["--brokers", "1", "--rack", "3=r"],
        &["--brokers", "1", "--node-id", "-1"],
    ] {
        let status = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
            .arg("fake")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run");
        assert_eq!(status.code(), Some(2), "{args:?}");
    }
}
