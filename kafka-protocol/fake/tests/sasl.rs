//! SASL over real sockets: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 with
//! SaslAuthenticate, PLAIN in the legacy form (SaslHandshake v0, bare
//! tokens), a wrong password refused and the connection closed, and a
//! request before authentication closing the connection, as Kafka 4.4.0
//! does (tests/tests/real_kafka_clients.rs holds Kafka to the same; the
//! answers before authentication were compared with Kafka's by hand).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use kafka_wire::messages::*;
use kafka_wire::{ErrorCode, RequestBody, ResponseBody};
use kafka_wire_fake::probe::{Probe, ProbeError};
use kafka_wire_fake::{FakeCluster, SaslMechanism};
use sha2::{Digest, Sha256, Sha512};

const USER: &str = "alice";
const PASSWORD: &str = "s3cret";

async fn cluster() -> FakeCluster {
    FakeCluster::builder()
        .brokers(1)
        .sasl_user(SaslMechanism::Plain, USER, PASSWORD)
        .sasl_user(SaslMechanism::ScramSha256, USER, PASSWORD)
        .sasl_user(SaslMechanism::ScramSha512, USER, PASSWORD)
        .start()
        .await
        .expect("start")
}

async fn handshake(probe: &mut Probe, mechanism: &str, version: i16) -> (i16, Vec<String>) {
    let request = RequestBody::SaslHandshake(SaslHandshakeRequest {
        mechanism: mechanism.to_owned().into(),
    });
    match probe.request(request, version).await {
        Ok(ResponseBody::SaslHandshake(r)) => (
            r.error_code,
            r.mechanisms.iter().map(|m| m.to_string()).collect(),
        ),
        other => panic!("{other:?}"),
    }
}

async fn token(probe: &mut Probe, bytes: &[u8]) -> Result<Vec<u8>, i16> {
    let request = RequestBody::SaslAuthenticate(SaslAuthenticateRequest {
        auth_bytes: bytes.to_vec().into(),
        ..Default::default()
    });
    match probe.request(request, 2).await {
        Ok(ResponseBody::SaslAuthenticate(r)) if r.error_code == 0 => Ok(r.auth_bytes.to_vec()),
        Ok(ResponseBody::SaslAuthenticate(r)) => Err(r.error_code),
        other => panic!("{other:?}"),
    }
}

async fn metadata(probe: &mut Probe) -> Result<ResponseBody<'static>, ProbeError> {
    probe
        .request(RequestBody::Metadata(MetadataRequest::default()), 12)
        .await
}

fn mac<M: Mac + hmac::digest::KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <M as Mac>::new_from_slice(key).expect("key");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// SCRAM's client side: the client-final message and the expected server
/// signature, from the server-first message.
fn scram_final(
    sha512: bool,
    first_bare: &str,
    server_first: &str,
    password: &str,
) -> (String, Vec<u8>) {
    let attribute = |name: &str| {
        server_first
            .split(',')
            .find_map(|a| a.strip_prefix(name))
            .expect("attribute")
    };
    let salt = STANDARD.decode(attribute("s=")).expect("salt");
    let iterations: u32 = attribute("i=").parse().expect("iterations");
    let without_proof = format!("c={},r={}", STANDARD.encode("n,,"), attribute("r="));
    let auth = format!("{first_bare},{server_first},{without_proof}");
    let (client_key, stored, signature_key, server_key);
    if sha512 {
        let mut salted = [0u8; 64];
        pbkdf2::pbkdf2_hmac::<Sha512>(password.as_bytes(), &salt, iterations, &mut salted);
        client_key = mac::<Hmac<Sha512>>(&salted, b"Client Key");
        stored = Sha512::digest(&client_key).to_vec();
        signature_key = mac::<Hmac<Sha512>>(&stored, auth.as_bytes());
        server_key = mac::<Hmac<Sha512>>(&salted, b"Server Key");
    } else {
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), &salt, iterations, &mut salted);
        client_key = mac::<Hmac<Sha256>>(&salted, b"Client Key");
        stored = Sha256::digest(&client_key).to_vec();
        signature_key = mac::<Hmac<Sha256>>(&stored, auth.as_bytes());
        server_key = mac::<Hmac<Sha256>>(&salted, b"Server Key");
    }
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature_key)
        .map(|(k, s)| k ^ s)
        .collect();
    let server_signature = if sha512 {
        mac::<Hmac<Sha512>>(&server_key, auth.as_bytes())
    } else {
        mac::<Hmac<Sha256>>(&server_key, auth.as_bytes())
    };
    (
        format!("{without_proof},p={}", STANDARD.encode(proof)),
        server_signature,
    )
}

#[tokio::test]
async fn each_mechanism_authenticates_and_a_wrong_password_is_refused() {
    let cluster = cluster().await;
    let bootstrap = cluster.bootstrap();

    // PLAIN.
    let mut probe = Probe::connect(&bootstrap).await.expect("connect");
    let (error, mechanisms) = handshake(&mut probe, "PLAIN", 1).await;
    assert_eq!(error, 0);
    assert_eq!(mechanisms, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
    let plain = format!("\0{USER}\0{PASSWORD}");
    assert_eq!(token(&mut probe, plain.as_bytes()).await, Ok(Vec::new()));
    assert!(matches!(
        metadata(&mut probe).await,
        Ok(ResponseBody::Metadata(_))
    ));

    // SCRAM, both hashes.
    for (mechanism, sha512) in [("SCRAM-SHA-256", false), ("SCRAM-SHA-512", true)] {
        let mut probe = Probe::connect(&bootstrap).await.expect("connect");
        assert_eq!(handshake(&mut probe, mechanism, 1).await.0, 0);
        let first_bare = format!("n={USER},r=clientnonce42");
        let server_first = token(&mut probe, format!("n,,{first_bare}").as_bytes())
            .await
            .expect("server-first");
        let server_first = String::from_utf8(server_first).expect("utf-8");
        assert!(
            server_first.starts_with("r=clientnonce42"),
            "{server_first}"
        );
        let (last, signature) = scram_final(sha512, &first_bare, &server_first, PASSWORD);
        let server_final = token(&mut probe, last.as_bytes()).await.expect("final");
        assert_eq!(
            server_final,
            format!("v={}", STANDARD.encode(signature)).into_bytes(),
            "{mechanism}"
        );
        assert!(matches!(
            metadata(&mut probe).await,
            Ok(ResponseBody::Metadata(_))
        ));

        // A wrong password: refused, then the connection is closed.
        let mut probe = Probe::connect(&bootstrap).await.expect("connect");
        assert_eq!(handshake(&mut probe, mechanism, 1).await.0, 0);
        let server_first = token(&mut probe, format!("n,,{first_bare}").as_bytes())
            .await
            .expect("server-first");
        let server_first = String::from_utf8(server_first).expect("utf-8");
        let (last, _) = scram_final(sha512, &first_bare, &server_first, "wrong");
        assert_eq!(
            token(&mut probe, last.as_bytes()).await,
            Err(ErrorCode::SaslAuthenticationFailed.code())
        );
        assert!(metadata(&mut probe).await.is_err());
    }

    // PLAIN's wrong password, and an unknown mechanism.
    let mut probe = Probe::connect(&bootstrap).await.expect("connect");
    assert_eq!(
        handshake(&mut probe, "GSSAPI", 1).await.0,
        ErrorCode::UnsupportedSaslMechanism.code()
    );
    let mut probe = Probe::connect(&bootstrap).await.expect("connect");
    assert_eq!(handshake(&mut probe, "PLAIN", 1).await.0, 0);
    let wrong = format!("\0{USER}\0nope");
    assert_eq!(
        token(&mut probe, wrong.as_bytes()).await,
        Err(ErrorCode::SaslAuthenticationFailed.code())
    );
}

#[tokio::test]
async fn the_legacy_form_and_requests_before_authentication() {
    let cluster = cluster().await;
    let bootstrap = cluster.bootstrap();
    // ApiVersions is served before authentication; Metadata closes.
    let mut probe = Probe::connect(&bootstrap).await.expect("connect");
    let versions = probe
        .request(RequestBody::ApiVersions(ApiVersionsRequest::default()), 3)
        .await;
    assert!(matches!(versions, Ok(ResponseBody::ApiVersions(_))));
    assert!(metadata(&mut probe).await.is_err());
    // So does SaslAuthenticate before SaslHandshake, unanswered.
    let mut probe = Probe::connect(&bootstrap).await.expect("connect");
    let plain = format!("\0{USER}\0{PASSWORD}");
    let request = RequestBody::SaslAuthenticate(SaslAuthenticateRequest {
        auth_bytes: plain.into_bytes().into(),
        ..Default::default()
    });
    assert!(probe.request(request, 2).await.is_err());
    // Without users, SaslHandshake is ILLEGAL_SASL_STATE, no mechanism.
    let open = FakeCluster::builder()
        .brokers(1)
        .start()
        .await
        .expect("start");
    let mut probe = Probe::connect(&open.bootstrap()).await.expect("connect");
    assert_eq!(
        handshake(&mut probe, "PLAIN", 1).await,
        (ErrorCode::IllegalSaslState.code(), Vec::new())
    );

    // SaslHandshake v0, then a bare PLAIN token answered by an empty frame.
    let mut probe = Probe::connect(&bootstrap).await.expect("connect");
    assert_eq!(handshake(&mut probe, "PLAIN", 0).await.0, 0);
    let plain = format!("\0{USER}\0{PASSWORD}");
    assert_eq!(
        probe.exchange_raw(plain.as_bytes()).await.expect("answer"),
        Vec::<u8>::new()
    );
    assert!(matches!(
        metadata(&mut probe).await,
        Ok(ResponseBody::Metadata(_))
    ));
}
