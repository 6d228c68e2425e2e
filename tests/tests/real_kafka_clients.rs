//! Real clients and SASL through `kafka-protocol proxy` in front of real
//! Kafka (issue 20, stages 4 and 5), on a node that `tests/kafka/broker.sh`
//! starts with a SASL_PLAINTEXT listener (PLAIN and SCRAM-SHA-256) beside
//! its PLAINTEXT one.
//!
//! - Kafka's Java clients and kgo run the flow of `real_clients.rs`
//!   (create, produce, group consume, commit, leave) through the proxy:
//!   every exchange is in its log, decoded both ways, and Metadata,
//!   FindCoordinator and DescribeCluster advertise only the proxy. The Java
//!   consumer runs once more with KIP-848's group protocol.
//! - kafka-wire authenticates itself with SaslHandshake and
//!   SaslAuthenticate (PLAIN and SCRAM-SHA-256, the client side of SCRAM
//!   written here), and in the legacy form (SaslHandshake v0, then bare
//!   tokens), directly and through the proxy; a wrong password is refused.
//! - The Java client authenticates with SCRAM-SHA-256 and kgo with PLAIN
//!   through the proxy, and run the whole flow.
//! - The proxy's log shows each mechanism and never a password or token.
//!
//! Without the script, Java or the broker's jars it skips with a message
//! (a failure with `KAFKA_WIRE_REQUIRE_JAVA`); without Go, the kgo parts
//! skip (a failure with `KAFKA_WIRE_REQUIRE_GO`).

use std::io;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use kafka_wire::frame::ResponseFrame;
use kafka_wire::messages::{
    ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse,
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_wire::IntoOwned;
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};
use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};
use kafka_wire_tests::broker::Client;
use kafka_wire_tests::clients::{
    check_flow, kgo_flow, proxy, run_java, run_java_with, run_kgo, say, scratch, ProxyLog,
};
use kafka_wire_tests::java::jvm;
use sha2::{Digest, Sha256};

const RECORDS: usize = 20;
const USER: &str = "alice";
const PASSWORD: &str = "alice-secret-4f9d";

// ---------------------------------------------------------------------------
// A blocking client, one request at a time: the tests crate's `Client`.

/// Sends `body` at `version` and decodes the answer, or `None` when the
/// broker closes the connection instead.
fn call(client: &mut Client, version: i16, body: RequestBody<'_>) -> Option<ResponseBody<'static>> {
    let api = body.api_key();
    let frame = match client.exchange(version, body) {
        Ok(frame) => frame?,
        // An answer to another correlation id.
        Err(error) if error.kind() == io::ErrorKind::Other => panic!("{error}"),
        Err(_) => return None,
    };
    let response = ResponseFrame::decode(&frame, api, version)
        .unwrap_or_else(|e| panic!("the {} v{version} answer: {e}", api.name()));
    Some(response.body.into_owned())
}

/// A bare token of the legacy form: size prefix and bytes, no header; the
/// broker's answer, or `None` when it closes the connection instead.
fn bare(client: &mut Client, token: &[u8]) -> Option<Vec<u8>> {
    let size = i32::try_from(token.len()).unwrap_or_else(|e| panic!("{e}"));
    let mut bytes = size.to_be_bytes().to_vec();
    bytes.extend_from_slice(token);
    client.send_raw(&bytes).ok()?;
    client.read_frame().ok()
}

// ---------------------------------------------------------------------------
// SASL, client side.

/// How the tokens travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// SaslHandshake v1, then SaslAuthenticate v2 requests.
    Authenticate,
    /// SaslHandshake v0, then bare tokens.
    Legacy,
}

/// SCRAM-SHA-256's client side (RFC 5802, RFC 7677): the client-first
/// message, then the client-final one from the server-first, then the
/// check of the server's signature.
struct Scram {
    nonce: String,
    client_first_bare: String,
    password: String,
    server_signature: Vec<u8>,
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = HmacSha256::new_from_slice(key).unwrap_or_else(|e| panic!("{e}"));
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

impl Scram {
    fn new(user: &str, password: &str) -> Scram {
        // A nonce unique to this run; its strength does not matter here.
        let seed = format!("{}-{:?}", std::process::id(), std::time::SystemTime::now());
        let nonce = STANDARD.encode(Sha256::digest(seed.as_bytes()));
        let user = user.replace('=', "=3D").replace(',', "=2C");
        Scram {
            client_first_bare: format!("n={user},r={nonce}"),
            nonce,
            password: password.to_owned(),
            server_signature: Vec::new(),
        }
    }

    fn client_first(&self) -> Vec<u8> {
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    fn client_final(&mut self, server_first: &[u8]) -> Vec<u8> {
        let server_first = std::str::from_utf8(server_first).unwrap_or_else(|e| panic!("{e}"));
        let attribute = |name: &str| {
            server_first
                .split(',')
                .find_map(|a| a.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in {server_first}"))
        };
        let nonce = attribute("r=");
        assert!(
            nonce.starts_with(&self.nonce),
            "the server's nonce does not extend ours"
        );
        let salt = STANDARD
            .decode(attribute("s="))
            .unwrap_or_else(|e| panic!("{e}"));
        let iterations: u32 = attribute("i=").parse().unwrap_or_else(|e| panic!("{e}"));
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(self.password.as_bytes(), &salt, iterations, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        let stored_key = Sha256::digest(&client_key);
        let without_proof = format!("c={},r={nonce}", STANDARD.encode("n,,"));
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac(&salted, b"Server Key");
        self.server_signature = hmac(&server_key, auth_message.as_bytes());
        format!("{without_proof},p={}", STANDARD.encode(proof)).into_bytes()
    }

    fn check_server_final(&self, server_final: &[u8]) {
        let text = std::str::from_utf8(server_final).unwrap_or_else(|e| panic!("{e}"));
        let signature = text
            .strip_prefix("v=")
            .unwrap_or_else(|| panic!("the server's last SCRAM message: {text}"));
        assert_eq!(
            STANDARD.decode(signature).unwrap_or_else(|e| panic!("{e}")),
            self.server_signature,
            "the server's signature does not prove it knows the password"
        );
    }
}

/// One token exchange in `form`: the broker's answer, or its error code
/// (SaslAuthenticate) / `None` (legacy: the broker closes).
fn exchange(wire: &mut Client, form: Form, token: &[u8]) -> Result<Vec<u8>, Option<i16>> {
    match form {
        Form::Legacy => bare(wire, token).ok_or(None),
        Form::Authenticate => {
            let body = call(
                wire,
                2,
                SaslAuthenticateRequest {
                    auth_bytes: token.to_vec().into(),
                    ..Default::default()
                }
                .into(),
            );
            let Some(ResponseBody::SaslAuthenticate(SaslAuthenticateResponse {
                error_code,
                auth_bytes,
                ..
            })) = body
            else {
                return Err(None);
            };
            if error_code != 0 {
                return Err(Some(error_code));
            }
            Ok(auth_bytes.into_owned())
        }
    }
}

/// What an authenticated connection saw: the tokens that crossed (the
/// secrets the log must not show) and the brokers Metadata advertised.
type Authenticated = (Vec<Vec<u8>>, Vec<String>);

/// Authenticates on a new connection to `address` and asks for Metadata.
/// `Err` with the error code (or `None`) when the broker refuses.
fn authenticate(
    address: &str,
    mechanism: &str,
    form: Form,
    password: &str,
) -> Result<Authenticated, Option<i16>> {
    let mut wire = Client::connect(address, "kafka-wire-sasl")
        .unwrap_or_else(|e| panic!("connect {address}: {e}"));
    // ApiVersions first, as clients do; it needs no authentication.
    let Some(ResponseBody::ApiVersions(ApiVersionsResponse { api_keys, .. })) = call(
        &mut wire,
        3,
        ApiVersionsRequest {
            client_software_name: "kafka-wire".into(),
            client_software_version: "0.1.0".into(),
            ..Default::default()
        }
        .into(),
    ) else {
        panic!("no ApiVersions answer before authentication");
    };
    for api in [ApiKey::SaslHandshake, ApiKey::SaslAuthenticate] {
        assert!(
            api_keys.iter().any(|k| k.api_key == api.key()),
            "{} not advertised",
            api.name()
        );
    }
    let version = if form == Form::Legacy { 0 } else { 1 };
    let Some(ResponseBody::SaslHandshake(SaslHandshakeResponse {
        error_code,
        mechanisms,
        ..
    })) = call(
        &mut wire,
        version,
        SaslHandshakeRequest {
            mechanism: mechanism.to_owned().into(),
        }
        .into(),
    )
    else {
        panic!("no SaslHandshake answer");
    };
    assert_eq!(
        error_code, 0,
        "SaslHandshake v{version} {mechanism}: {mechanisms:?}"
    );
    assert!(
        mechanisms.iter().any(|m| m == mechanism),
        "{mechanism} not in {mechanisms:?}"
    );
    let mut tokens = Vec::new();
    match mechanism {
        "PLAIN" => {
            let token = format!("\0{USER}\0{password}").into_bytes();
            let answer = exchange(&mut wire, form, &token)?;
            assert!(answer.is_empty(), "PLAIN answers nothing: {answer:?}");
            tokens.push(token);
        }
        "SCRAM-SHA-256" => {
            let mut scram = Scram::new(USER, password);
            let first = scram.client_first();
            let server_first = exchange(&mut wire, form, &first)?;
            let last = scram.client_final(&server_first);
            let server_final = exchange(&mut wire, form, &last)?;
            scram.check_server_final(&server_final);
            tokens.extend([first, server_first, last, server_final]);
        }
        other => panic!("no client side for {other}"),
    }
    // Authenticated: Kafka requests again.
    let Some(ResponseBody::Metadata(MetadataResponse { brokers, .. })) =
        call(&mut wire, 12, MetadataRequest::default().into())
    else {
        panic!("no Metadata answer after authenticating");
    };
    let brokers = brokers
        .iter()
        .map(|b| format!("{}:{}", b.host, b.port))
        .collect();
    Ok((tokens, brokers))
}

// ---------------------------------------------------------------------------
// The tests.

#[test]
fn java_clients_and_kgo_through_the_proxy_in_front_of_real_kafka() {
    let _one = one_at_a_time();
    let jvm = jvm();
    let kgo = kgo_flow();
    if jvm.is_none() && kgo.is_none() {
        return;
    }
    let Some(kafka) = Kafka::start("clients", &pinned_version(), &[]) else {
        return;
    };
    let dir = scratch("real-kafka-clients");
    let (proxy, log_path) = proxy(&dir, "proxy", kafka.get("bootstrap"));
    let mut counts = Vec::new();
    if let Some(jvm) = jvm {
        let outcome = run_java(jvm, proxy.address(), "java-real", RECORDS, None);
        check_flow(&outcome, RECORDS, proxy.address());
        let log = ProxyLog::read(&log_path);
        counts.push(("java", log.check_decoded("java-real", proxy.address())));
        log.check_java_counts("java-real", &outcome);
        say(&format!(
            "java through the proxy to Kafka: {:?}",
            log.counts("java-real")
        ));
        // The consumer again with KIP-848's protocol: ConsumerGroupHeartbeat.
        let more = ["--group-protocol", "consumer"];
        let outcome = run_java_with(jvm, proxy.address(), "java-848", RECORDS, None, &more);
        check_flow(&outcome, RECORDS, proxy.address());
        let log = ProxyLog::read(&log_path);
        counts.push(("java-848", log.check_decoded("java-848", proxy.address())));
        log.check_java_counts("java-848", &outcome);
        let heartbeats = log.counts("java-848-consumer");
        assert!(
            heartbeats
                .values()
                .any(|apis| apis.contains_key("ConsumerGroupHeartbeat")),
            "no ConsumerGroupHeartbeat: {heartbeats:?}"
        );
        say(&format!(
            "java (KIP-848 consumer) through the proxy to Kafka: {heartbeats:?}"
        ));
    }
    if let Some(kgo) = kgo {
        let outcome = run_kgo(kgo, proxy.address(), "kgo-real", RECORDS, None);
        check_flow(&outcome, RECORDS, proxy.address());
        let log = ProxyLog::read(&log_path);
        counts.push(("kgo", log.check_decoded("kgo-real", proxy.address())));
        log.check_kgo_counts("kgo-real", &outcome);
        say(&format!(
            "kgo through the proxy to Kafka: {:?}",
            log.counts("kgo-real")
        ));
    }
    say(&format!(
        "real Kafka through the proxy: exchanges logged, all decoded: {counts:?}"
    ));
}

#[test]
fn sasl_plain_and_scram_through_the_proxy_in_front_of_real_kafka() {
    let _one = one_at_a_time();
    let credentials = format!("{USER}:{PASSWORD}");
    let Some(kafka) = Kafka::start("sasl", &pinned_version(), &["--sasl", &credentials]) else {
        return;
    };
    let sasl = kafka.get("sasl_bootstrap");
    let dir = scratch("real-kafka-sasl");
    let (proxy, log_path) = proxy(&dir, "proxy", sasl);
    let mut secrets: Vec<Vec<u8>> = vec![PASSWORD.as_bytes().to_vec()];
    let mut done = Vec::new();
    for mechanism in ["PLAIN", "SCRAM-SHA-256"] {
        for form in [Form::Authenticate, Form::Legacy] {
            // Directly, and through the proxy: the same answers.
            let (tokens, brokers) = authenticate(sasl, mechanism, form, PASSWORD)
                .unwrap_or_else(|e| panic!("{mechanism} {form:?} directly: refused ({e:?})"));
            assert_eq!(brokers, [sasl], "{mechanism} {form:?}");
            let (proxied, brokers) = authenticate(proxy.address(), mechanism, form, PASSWORD)
                .unwrap_or_else(|e| {
                    panic!("{mechanism} {form:?} through the proxy: refused ({e:?})")
                });
            assert_eq!(brokers, [proxy.address()], "{mechanism} {form:?}");
            secrets.extend(tokens);
            secrets.extend(proxied);
            done.push(format!("{mechanism} {form:?}"));
        }
        // A wrong password is refused, in SaslAuthenticate's error code.
        let refused = authenticate(
            proxy.address(),
            mechanism,
            Form::Authenticate,
            "wrong-pass-9c1e",
        );
        assert_eq!(
            refused.err(),
            Some(Some(ErrorCode::SaslAuthenticationFailed.code())),
            "{mechanism} with a wrong password"
        );
    }
    say(&format!(
        "kafka-wire authenticated directly and through the proxy: {done:?}"
    ));

    // Kafka's Java client with SCRAM-SHA-256, kgo with PLAIN.
    if let Some(jvm) = jvm() {
        let sasl = Some(("SCRAM-SHA-256", USER, PASSWORD));
        let outcome = run_java(jvm, proxy.address(), "java-sasl", RECORDS, sasl);
        check_flow(&outcome, RECORDS, proxy.address());
        let log = ProxyLog::read(&log_path);
        log.check_decoded("java-sasl", proxy.address());
        log.check_java_counts("java-sasl", &outcome);
        say(&format!(
            "java with SCRAM-SHA-256 through the proxy: {:?}",
            log.counts("java-sasl")
        ));
    }
    if let Some(kgo) = kgo_flow() {
        let sasl = Some(("PLAIN", USER, PASSWORD));
        let outcome = run_kgo(kgo, proxy.address(), "kgo-sasl", RECORDS, sasl);
        check_flow(&outcome, RECORDS, proxy.address());
        let log = ProxyLog::read(&log_path);
        log.check_decoded("kgo-sasl", proxy.address());
        log.check_kgo_counts("kgo-sasl", &outcome);
        say(&format!(
            "kgo with PLAIN through the proxy: {:?}",
            log.counts("kgo-sasl")
        ));
    }

    // The log: each mechanism, each legacy round, no secret.
    let log = ProxyLog::read(&log_path);
    let failures: Vec<_> = log
        .lines
        .iter()
        .filter(|l| l.get("error").is_some())
        .collect();
    assert!(failures.is_empty(), "connections failed: {failures:?}");
    let handshakes: Vec<(String, i64)> = log
        .lines
        .iter()
        .filter(|l| l["api"] == "SaslHandshake")
        .map(|l| {
            (
                l["request"]["mechanism"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                l["version"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    for mechanism in ["PLAIN", "SCRAM-SHA-256"] {
        for version in [0, 1] {
            assert!(
                handshakes.contains(&(mechanism.to_owned(), version)),
                "no SaslHandshake v{version} {mechanism} in the log: {handshakes:?}"
            );
        }
    }
    let rounds: Vec<(String, u64)> = log
        .lines
        .iter()
        .filter_map(|l| {
            Some((
                l.get("saslToken")?.as_str()?.to_owned(),
                l["round"].as_u64()?,
            ))
        })
        .collect();
    assert_eq!(
        rounds,
        [
            ("PLAIN".to_owned(), 1),
            ("SCRAM-SHA-256".to_owned(), 1),
            ("SCRAM-SHA-256".to_owned(), 2)
        ],
        "the legacy token exchanges through the proxy"
    );
    for line in log.lines.iter().filter(|l| l["api"] == "SaslAuthenticate") {
        for side in ["request", "response"] {
            let bytes = &line[side]["authBytes"];
            assert!(
                bytes.as_str().is_some_and(|b| b.starts_with("<redacted: ")),
                "SaslAuthenticate {side} not redacted: {line}"
            );
        }
    }
    let secrets: Vec<&[u8]> = secrets.iter().map(Vec::as_slice).collect();
    log.check_no_secret(&secrets);
    say(&format!(
        "the proxy's SASL log: {} lines, {} handshakes, {} legacy token exchanges, no secret",
        log.lines.len(),
        handshakes.len(),
        rounds.len()
    ));
}
