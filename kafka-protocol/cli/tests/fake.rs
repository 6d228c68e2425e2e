//! `kafka-protocol fake --sasl MECHANISM:USER:PASSWORD`: every listener
//! requires SASL. Before authenticating a connection gets ApiVersions and
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

#[test]
fn with_sasl_every_listener_requires_it() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-protocol"))
        .args(["fake", "--brokers", "1", "--sasl", "PLAIN:alice:pw-1"])
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
