//! SASL's client side, sans-IO: PLAIN (RFC 4616) and SCRAM-SHA-256 and
//! SCRAM-SHA-512 (RFC 5802, as Kafka's KIP-84 uses them). The driver sends
//! SaslHandshake with [`Credentials::mechanism`]'s name, then each token
//! [`SaslClient`] gives in a SaslAuthenticate, until it says it is done.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

/// The most SCRAM iterations a server may ask for: Kafka's own limit is
/// 16,384; far more would only make a hostile server stall the run.
pub const MAX_SCRAM_ITERATIONS: u32 = 100_000;

/// A SASL mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// PLAIN.
    Plain,
    /// SCRAM-SHA-256.
    ScramSha256,
    /// SCRAM-SHA-512.
    ScramSha512,
}

impl Mechanism {
    /// The name SaslHandshake carries.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism named `name` (any case).
    pub fn from_name(name: &str) -> Option<Mechanism> {
        [
            Mechanism::Plain,
            Mechanism::ScramSha256,
            Mechanism::ScramSha512,
        ]
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why SASL failed or credentials do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaslError {
    /// `MECH:USER:PASS` that is not.
    #[error("`{0}` is not MECHANISM:USER:PASSWORD (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)")]
    BadCredentials(String),
    /// The server's message is not what the mechanism expects.
    #[error("the server's SCRAM message {0}")]
    BadServerMessage(String),
    /// The server's signature is wrong: it does not know the password.
    #[error("the server's SCRAM signature does not verify")]
    BadServerSignature,
    /// The server sent more after the exchange was over.
    #[error("the server sent a token after the exchange was over")]
    Finished,
}

/// A user's credentials for one mechanism.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// The user.
    pub user: String,
    /// The password.
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("mechanism", &self.mechanism)
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl Credentials {
    /// Parses `MECHANISM:USER:PASSWORD` (the password may hold colons).
    pub fn parse(text: &str) -> Result<Credentials, SaslError> {
        let bad = || SaslError::BadCredentials(redacted(text));
        let mut parts = text.splitn(3, ':');
        let (Some(mechanism), Some(user), Some(password)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let mechanism = Mechanism::from_name(mechanism).ok_or_else(bad)?;
        if user.is_empty() {
            return Err(bad());
        }
        Ok(Credentials {
            mechanism,
            user: user.to_owned(),
            password: password.to_owned(),
        })
    }
}

/// `MECH:USER:PASS` with the password hidden, for messages.
fn redacted(text: &str) -> String {
    let mut parts = text.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(u), Some(_)) => format!("{m}:{u}:<redacted>"),
        _ => text.to_owned(),
    }
}

#[derive(Debug)]
enum State {
    Start,
    /// SCRAM: the client-first message's bare part and the nonce sent.
    SentFirst {
        bare: String,
        nonce: String,
    },
    /// SCRAM: the server signature expected in the server-final message.
    SentFinal {
        server_signature: Vec<u8>,
    },
    Done,
}

/// One authentication exchange.
#[derive(Debug)]
pub struct SaslClient {
    credentials: Credentials,
    state: State,
}

impl SaslClient {
    /// An exchange for `credentials`.
    pub fn new(credentials: Credentials) -> SaslClient {
        SaslClient {
            credentials,
            state: State::Start,
        }
    }

    /// The first token, with a fresh random nonce for SCRAM.
    pub fn first(&mut self) -> Vec<u8> {
        let mut bytes = [0u8; 18];
        let _ = getrandom::fill(&mut bytes);
        self.first_with_nonce(&STANDARD.encode(bytes))
    }

    /// The first token, with `nonce` for SCRAM (tests give a fixed one).
    pub fn first_with_nonce(&mut self, nonce: &str) -> Vec<u8> {
        let c = &self.credentials;
        match c.mechanism {
            Mechanism::Plain => {
                self.state = State::Done;
                format!("\0{}\0{}", c.user, c.password).into_bytes()
            }
            Mechanism::ScramSha256 | Mechanism::ScramSha512 => {
                let user = c.user.replace('=', "=3D").replace(',', "=2C");
                let bare = format!("n={user},r={nonce}");
                let token = format!("n,,{bare}").into_bytes();
                self.state = State::SentFirst {
                    bare,
                    nonce: nonce.to_owned(),
                };
                token
            }
        }
    }

    /// Whether the exchange needs no more server messages.
    pub fn done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Takes the server's token: the next token to send, or `None` when
    /// the exchange is over (PLAIN's server sends an empty token; SCRAM's
    /// last message is checked here).
    pub fn next(&mut self, server: &[u8]) -> Result<Option<Vec<u8>>, SaslError> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Start | State::Done => Err(SaslError::Finished),
            State::SentFirst { bare, nonce } => {
                let (token, server_signature) = self.client_final(&bare, &nonce, server)?;
                self.state = State::SentFinal { server_signature };
                Ok(Some(token))
            }
            State::SentFinal { server_signature } => {
                let text = String::from_utf8_lossy(server);
                if let Some(error) = text.strip_prefix("e=") {
                    return Err(SaslError::BadServerMessage(format!("is an error: {error}")));
                }
                let signature = text
                    .strip_prefix("v=")
                    .and_then(|v| STANDARD.decode(v.split(',').next().unwrap_or(v)).ok())
                    .ok_or_else(|| SaslError::BadServerMessage(format!("`{text}` has no v=")))?;
                if signature != server_signature {
                    return Err(SaslError::BadServerSignature);
                }
                Ok(None)
            }
        }
    }

    fn client_final(
        &self,
        bare: &str,
        nonce: &str,
        server: &[u8],
    ) -> Result<(Vec<u8>, Vec<u8>), SaslError> {
        let bad = |why: &str| SaslError::BadServerMessage(why.to_owned());
        let first = std::str::from_utf8(server).map_err(|_| bad("is not UTF-8"))?;
        let attribute = |name: &str| {
            first
                .split(',')
                .find_map(|part| part.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        };
        let server_nonce = attribute("r").ok_or_else(|| bad("has no nonce"))?;
        if !server_nonce.starts_with(nonce) || server_nonce.len() == nonce.len() {
            return Err(bad("does not extend the client's nonce"));
        }
        let salt = attribute("s")
            .and_then(|s| STANDARD.decode(s).ok())
            .ok_or_else(|| bad("has no salt"))?;
        let iterations: u32 = attribute("i")
            .and_then(|i| i.parse().ok())
            .filter(|i| (1..=MAX_SCRAM_ITERATIONS).contains(i))
            .ok_or_else(|| bad("has no iteration count from 1 to 100000"))?;
        let mechanism = self.credentials.mechanism;
        let salted = salted_password(
            mechanism,
            self.credentials.password.as_bytes(),
            &salt,
            iterations,
        );
        let client_key = hmac(mechanism, &salted, b"Client Key");
        let stored_key = hash(mechanism, &client_key);
        let without_proof = format!("c={},r={server_nonce}", STANDARD.encode("n,,"));
        let auth_message = format!("{bare},{first},{without_proof}");
        let signature = hmac(mechanism, &stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = hmac(mechanism, &salted, b"Server Key");
        let server_signature = hmac(mechanism, &server_key, auth_message.as_bytes());
        let token = format!("{without_proof},p={}", STANDARD.encode(proof)).into_bytes();
        Ok((token, server_signature))
    }
}

fn hash(mechanism: Mechanism, data: &[u8]) -> Vec<u8> {
    match mechanism {
        Mechanism::ScramSha512 => Sha512::digest(data).to_vec(),
        _ => Sha256::digest(data).to_vec(),
    }
}

fn hmac(mechanism: Mechanism, key: &[u8], data: &[u8]) -> Vec<u8> {
    match mechanism {
        Mechanism::ScramSha512 => {
            let mut mac = <Hmac<Sha512> as Mac>::new_from_slice(key).expect("HMAC takes any key");
            mac.update(data);
            mac.finalize().into_bytes().to_vec()
        }
        _ => {
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key");
            mac.update(data);
            mac.finalize().into_bytes().to_vec()
        }
    }
}

fn salted_password(mechanism: Mechanism, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
    match mechanism {
        Mechanism::ScramSha512 => {
            let mut out = [0u8; 64];
            pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut out);
            out.to_vec()
        }
        _ => {
            let mut out = [0u8; 32];
            pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
            out.to_vec()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_parse_and_hide_the_password() {
        let c = Credentials::parse("scram-sha-256:alice:pa:ss").unwrap();
        assert_eq!(c.mechanism, Mechanism::ScramSha256);
        assert_eq!(c.password, "pa:ss");
        assert!(!format!("{c:?}").contains("pa:ss"));
        let error = Credentials::parse("GSSAPI:alice:secret").unwrap_err();
        assert!(!error.to_string().contains("secret"), "{error}");
        assert!(Credentials::parse("PLAIN::x").is_err());
        assert!(Credentials::parse("PLAIN:x").is_err());
    }

    #[test]
    fn plain_is_one_token() {
        let mut client = SaslClient::new(Credentials::parse("PLAIN:u:p").unwrap());
        assert_eq!(client.first(), b"\0u\0p");
        assert!(client.done());
    }

    /// RFC 7677's example exchange for SCRAM-SHA-256 (user "user",
    /// password "pencil").
    #[test]
    fn scram_sha_256_follows_rfc_7677() {
        let mut client = SaslClient::new(Credentials::parse("SCRAM-SHA-256:user:pencil").unwrap());
        let first = client.first_with_nonce("rOprNGfwEbeRWgbNEkqO");
        assert_eq!(first, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let last = client.next(server_first).unwrap().unwrap();
        assert_eq!(
            String::from_utf8(last).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        assert_eq!(
            client.next(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
            Ok(None)
        );
        assert_eq!(client.next(b"more"), Err(SaslError::Finished));
    }

    #[test]
    fn a_hostile_scram_server_is_refused() {
        let start = || {
            let mut c = SaslClient::new(Credentials::parse("SCRAM-SHA-512:u:p").unwrap());
            c.first_with_nonce("abc");
            c
        };
        for bad in [
            &b"r=xyz,s=AAAA,i=4096"[..],
            b"r=abc,s=AAAA,i=4096",
            b"r=abcd,s=AAAA,i=4000000000",
            b"r=abcd,i=4096",
            b"\xff",
        ] {
            assert!(
                start().next(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut client = start();
        client.next(b"r=abcd,s=AAAA,i=16").unwrap();
        assert_eq!(client.next(b"v=AAAA"), Err(SaslError::BadServerSignature));
    }
}
