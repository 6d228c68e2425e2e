//! `kafka-protocol proxy` end to end over 127.0.0.1: a fake broker upstream,
//! the built binary in between, and raw frames from a client socket.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    find_coordinator_response, metadata_response, produce_request, FindCoordinatorRequest,
    FindCoordinatorResponse, MetadataRequest, MetadataResponse, ProduceRequest,
};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use kafka_wire_test_support::attack::{
    flood_with_size_prefixes, with_address_space_limit, ADDRESS_SPACE_LIMIT,
};
use kafka_wire_test_support::fake_broker::{
    fake_broker as support_fake_broker, fake_listener, respond, Reply,
};
use kafka_wire_test_support::frames::{receive, send_request};
use kafka_wire_test_support::process::Listening;
use serde_json::Value;

/// A broker that answers Metadata and FindCoordinator with its own address,
/// and nothing else (a Produce with acks=0 gets no answer).
fn fake_broker() -> u16 {
    let address = support_fake_broker(|request, address| {
        let port = address.port().into();
        match request.body {
            RequestBody::Metadata(_) => Reply::Answer(
                MetadataResponse {
                    brokers: vec![metadata_response::MetadataResponseBroker {
                        node_id: 1,
                        host: "127.0.0.1".into(),
                        port,
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }
                .into(),
            ),
            RequestBody::FindCoordinator(_) => Reply::Answer(
                FindCoordinatorResponse {
                    coordinators: vec![find_coordinator_response::Coordinator {
                        key: "group".into(),
                        node_id: 1,
                        host: "127.0.0.1".into(),
                        port,
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }
                .into(),
            ),
            _ => Reply::Nothing,
        }
    });
    address.port()
}

/// The proxy under test, with the log it writes.
struct Proxy {
    server: Listening,
    address: String,
    log: PathBuf,
}

impl Proxy {
    fn start(upstream: &str, name: &str) -> Proxy {
        Proxy::start_with(
            Command::new(env!("CARGO_BIN_EXE_kafka-protocol")),
            upstream,
            name,
            &[],
        )
    }

    /// Starts the proxy through `command`, which runs the binary, with
    /// `extra` arguments.
    fn start_with(mut command: Command, upstream: &str, name: &str, extra: &[&str]) -> Proxy {
        let log = proxy_log_path(name);
        command
            .args([
                "proxy",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                upstream,
                "--log",
            ])
            .arg(&log)
            .args(extra);
        let server = Listening::start(&mut command, &log.with_extension("err"));
        Proxy {
            address: server.address().to_owned(),
            server,
            log,
        }
    }

    /// SIGTERM; returns the exit status and standard error.
    fn stop(self) -> (Option<i32>, String) {
        self.server.stop()
    }

    /// The log's lines, once there are at least `count` (the log is
    /// written by a thread of its own, after the answers reach the
    /// client), or all there are after ten seconds.
    fn log_lines(&self, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if text.lines().count() >= count || Instant::now() > deadline {
                return text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                    .collect();
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

fn send(stream: &mut TcpStream, version: i16, correlation_id: i32, body: RequestBody) {
    send_request(stream, version, correlation_id, "proxy-test", body);
}

#[test]
fn proxy_rewrites_addresses_logs_exchanges_and_exits_0_on_sigterm() {
    let broker_port = fake_broker();
    let proxy = Proxy::start(&format!("127.0.0.1:{broker_port}"), "main");
    let proxy_port: i32 = proxy.address.rsplit_once(':').unwrap().1.parse().unwrap();
    let mut client = TcpStream::connect(&proxy.address).unwrap();

    // acks=0: logged with a null response, none comes.
    send(
        &mut client,
        9,
        1,
        ProduceRequest {
            acks: 0,
            topic_data: vec![produce_request::TopicProduceData {
                name: "t".into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
        .into(),
    );
    send(&mut client, 12, 2, MetadataRequest::default().into());
    let frame = receive(&mut client).unwrap();
    let metadata = ResponseFrame::decode(&frame, ApiKey::Metadata, 12).unwrap();
    assert_eq!(metadata.header.correlation_id, 2);
    let ResponseBody::Metadata(metadata) = metadata.body else {
        panic!()
    };
    let broker = metadata.brokers.iter().next().unwrap();
    assert_eq!((&*broker.host, broker.port), ("127.0.0.1", proxy_port));

    send(
        &mut client,
        4,
        3,
        FindCoordinatorRequest {
            coordinator_keys: vec!["group".into()],
            ..Default::default()
        }
        .into(),
    );
    let frame = receive(&mut client).unwrap();
    let find = ResponseFrame::decode(&frame, ApiKey::FindCoordinator, 4).unwrap();
    let ResponseBody::FindCoordinator(find) = find.body else {
        panic!()
    };
    assert_eq!(find.coordinators.iter().next().unwrap().port, proxy_port);
    drop(client);

    let lines = proxy.log_lines(3);
    let log = proxy.log.clone();
    let (code, stderr) = proxy.stop();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(lines.len(), 3, "{lines:?}");
    let keys: Vec<&str> = lines[1]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "api",
            "version",
            "correlationId",
            "clientId",
            "request",
            "response"
        ]
    );
    assert_eq!(lines[0]["api"], "Produce");
    assert_eq!(lines[0]["correlationId"], 1);
    assert_eq!(lines[0]["request"]["acks"], 0);
    assert_eq!(lines[0]["response"], Value::Null);
    assert_eq!(lines[1]["api"], "Metadata");
    assert_eq!(lines[1]["version"], 12);
    assert_eq!(lines[1]["clientId"], "proxy-test");
    assert_eq!(lines[1]["response"]["brokers"][0]["port"], proxy_port);
    assert_eq!(lines[2]["response"]["coordinators"][0]["port"], proxy_port);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains(&broker_port.to_string()), "{text}");
    let _ = std::fs::remove_file(&log);
}

#[test]
fn an_unreachable_upstream_closes_the_client_connection() {
    // A port nothing listens on: bind, read the port, close.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let proxy = Proxy::start(&format!("127.0.0.1:{port}"), "down");
    let mut client = TcpStream::connect(&proxy.address).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(client.read(&mut byte).unwrap(), 0, "connection not closed");
    let lines = proxy.log_lines(1);
    let log = proxy.log.clone();
    let (code, stderr) = proxy.stop();
    assert_eq!(code, Some(0));
    let stderr_lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(stderr_lines.len(), 1, "{stderr}");
    assert!(stderr_lines[0].contains(&format!("upstream 127.0.0.1:{port} unreachable")));
    assert_eq!(lines.len(), 1);
    assert!(lines[0]["error"].as_str().unwrap().contains("unreachable"));
    let _ = std::fs::remove_file(&log);
}

/// Sixty connections that each send only a size prefix claiming 100 MiB,
/// against a proxy whose address space is limited to 1 GiB: had it reserved
/// each claimed frame, the twelfth would have aborted it, and every client
/// with it. It holds only what arrived, and keeps relaying other clients.
#[test]
fn size_prefixes_alone_on_many_connections_leave_the_proxy_serving_others() {
    let broker_port = fake_broker();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_kafka-protocol"));
    let mut proxy = Proxy::start_with(
        with_address_space_limit(&binary, ADDRESS_SPACE_LIMIT),
        &format!("127.0.0.1:{broker_port}"),
        "flood",
        &[],
    );
    let flood = flood_with_size_prefixes(&proxy.address, 60, |stream| {
        send(stream, 12, 1, MetadataRequest::default().into());
        receive(stream).expect("an answer before the flood");
    });
    let mut client = TcpStream::connect(&proxy.address).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for correlation_id in 1..=3 {
        send(
            &mut client,
            12,
            correlation_id,
            MetadataRequest::default().into(),
        );
        let frame = receive(&mut client).expect("an answer through the flooded proxy");
        let answer = ResponseFrame::decode(&frame, ApiKey::Metadata, 12).unwrap();
        assert_eq!(answer.header.correlation_id, correlation_id);
    }
    assert!(
        proxy.server.is_running(),
        "the proxy exited under the flood"
    );
    drop(flood);
    let (code, stderr) = proxy.stop();
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let _ = std::fs::remove_file(proxy_log_path("flood"));
}

/// Where [`Proxy::start`] puts the log of the proxy named `name`.
fn proxy_log_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "kafka-wire-proxy-{}-{name}.log",
        std::process::id()
    ))
}

/// A broker that authenticates with SASL PLAIN in both forms: after a
/// SaslHandshake v0 it reads the bare token and answers an empty bare
/// frame; SaslAuthenticate gets `server-proof` back. Then it answers
/// Metadata.
fn fake_sasl_broker() -> u16 {
    use kafka_wire::messages::{SaslAuthenticateResponse, SaslHandshakeResponse};
    let address = fake_listener(|mut stream, _| {
        let mut bare_token_next = false;
        while let Some(frame) = receive(&mut stream) {
            if bare_token_next {
                assert!(frame.starts_with(b"\0alice\0"), "not a PLAIN token");
                stream.write_all(&0i32.to_be_bytes()).unwrap();
                bare_token_next = false;
                continue;
            }
            let request = RequestFrame::decode(&frame).unwrap();
            let version = request.api_version();
            let body: ResponseBody = match request.body {
                RequestBody::SaslHandshake(_) => {
                    bare_token_next = version == 0;
                    SaslHandshakeResponse {
                        mechanisms: vec!["PLAIN".into()],
                        ..Default::default()
                    }
                    .into()
                }
                RequestBody::SaslAuthenticate(_) => SaslAuthenticateResponse {
                    auth_bytes: b"server-proof".to_vec().into(),
                    ..Default::default()
                }
                .into(),
                RequestBody::Metadata(_) => MetadataResponse::default().into(),
                _ => continue,
            };
            respond(&mut stream, &request, body, version);
        }
    });
    address.port()
}

#[test]
fn sasl_passes_through_in_both_forms_and_the_log_shows_no_secret() {
    use kafka_wire::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
    let broker_port = fake_sasl_broker();
    let proxy = Proxy::start(&format!("127.0.0.1:{broker_port}"), "sasl");
    let token = b"\0alice\0hunter2-secret";

    // The legacy form: SaslHandshake v0, then the token with no header.
    let mut legacy = TcpStream::connect(&proxy.address).unwrap();
    send(
        &mut legacy,
        0,
        1,
        SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        }
        .into(),
    );
    let answer = receive(&mut legacy).unwrap();
    assert_eq!(answer[..4], 1i32.to_be_bytes());
    let mut bare = (token.len() as i32).to_be_bytes().to_vec();
    bare.extend_from_slice(token);
    legacy.write_all(&bare).unwrap();
    assert_eq!(receive(&mut legacy).unwrap(), b"");
    send(&mut legacy, 12, 2, MetadataRequest::default().into());
    receive(&mut legacy).unwrap();

    // SaslHandshake v1 and SaslAuthenticate.
    let mut modern = TcpStream::connect(&proxy.address).unwrap();
    send(
        &mut modern,
        1,
        1,
        SaslHandshakeRequest {
            mechanism: "PLAIN".into(),
        }
        .into(),
    );
    receive(&mut modern).unwrap();
    send(
        &mut modern,
        2,
        2,
        SaslAuthenticateRequest {
            auth_bytes: token.to_vec().into(),
            ..Default::default()
        }
        .into(),
    );
    receive(&mut modern).unwrap();
    send(&mut modern, 12, 3, MetadataRequest::default().into());
    receive(&mut modern).unwrap();
    drop((legacy, modern));

    let lines = proxy.log_lines(6);
    let text = std::fs::read_to_string(&proxy.log).unwrap();
    let (code, stderr) = proxy.stop();
    assert_eq!(code, Some(0), "{stderr}");
    let by_kind: Vec<String> = lines
        .iter()
        .map(|l| match (l.get("api"), l.get("saslToken")) {
            (Some(api), _) => format!("{}v{}", api.as_str().unwrap(), l["version"]),
            (None, Some(mechanism)) => {
                format!("token {} round {}", mechanism.as_str().unwrap(), l["round"])
            }
            _ => panic!("unexpected line {l}"),
        })
        .collect();
    for expected in [
        "SaslHandshakev0",
        "token PLAIN round 1",
        "Metadatav12",
        "SaslHandshakev1",
        "SaslAuthenticatev2",
    ] {
        assert!(
            by_kind.iter().any(|k| k == expected),
            "no {expected} in {by_kind:?}"
        );
    }
    assert_eq!(by_kind.iter().filter(|k| *k == "Metadatav12").count(), 2);
    let token_line = lines.iter().find(|l| l.get("saslToken").is_some()).unwrap();
    assert_eq!(
        token_line.to_string(),
        format!(
            r#"{{"saslToken":"PLAIN","round":1,"clientId":"proxy-test","clientBytes":{},"brokerBytes":0}}"#,
            token.len()
        )
    );
    let authenticate = lines
        .iter()
        .find(|l| l.get("api").and_then(Value::as_str) == Some("SaslAuthenticate"))
        .unwrap();
    assert_eq!(authenticate["request"]["authBytes"], "<redacted: 21 bytes>");
    assert_eq!(
        authenticate["response"]["authBytes"],
        "<redacted: 12 bytes>"
    );
    let handshake = lines
        .iter()
        .find(|l| l.get("api").and_then(Value::as_str) == Some("SaslHandshake"))
        .unwrap();
    assert_eq!(handshake["request"]["mechanism"], "PLAIN");
    // Neither the secret nor any encoding of the tokens appears.
    use base64::Engine as _;
    for secret in [
        "hunter2".to_owned(),
        base64::engine::general_purpose::STANDARD.encode(token),
        base64::engine::general_purpose::STANDARD.encode(b"server-proof"),
        hex::encode(token),
    ] {
        assert!(!text.contains(&secret), "the log shows {secret}:\n{text}");
        assert!(!stderr.contains(&secret), "stderr shows {secret}");
    }
}

/// `--max-connections` closes the connection past the cap on accept, and
/// `--idle-timeout` closes one across which no whole frame passes, which
/// frees its place for the next client. A partial frame does not count as
/// activity.
#[test]
fn connections_past_the_cap_and_idle_connections_are_closed() {
    let broker_port = fake_broker();
    let proxy = Proxy::start_with(
        Command::new(env!("CARGO_BIN_EXE_kafka-protocol")),
        &format!("127.0.0.1:{broker_port}"),
        "limits",
        &["--max-connections", "1", "--idle-timeout", "1"],
    );
    let connect = || {
        let stream = TcpStream::connect(&proxy.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    };
    let mut first = connect();
    send(&mut first, 12, 1, MetadataRequest::default().into());
    assert!(receive(&mut first).is_some(), "the first client is served");
    // A second client while the first holds the only place: closed.
    let mut second = connect();
    let mut byte = [0u8; 1];
    assert!(
        matches!(second.read(&mut byte), Ok(0)),
        "not closed on accept"
    );
    // The first now sends half a frame and goes quiet: closed when idle.
    let started = Instant::now();
    first.write_all(&100i32.to_be_bytes()).unwrap();
    assert!(
        matches!(first.read(&mut byte), Ok(0)),
        "not closed when idle"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
    // Its place is free again, once the proxy has finished with it.
    let deadline = Instant::now() + Duration::from_secs(3);
    let served = loop {
        let mut third = connect();
        send(&mut third, 12, 2, MetadataRequest::default().into());
        if receive(&mut third).is_some() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        thread::sleep(Duration::from_millis(50));
    };
    assert!(served, "the third client is never served");
    drop((first, second));
    let (code, stderr) = proxy.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("idle"), "{stderr}");
}
