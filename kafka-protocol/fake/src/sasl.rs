//! SASL on a connection, as Kafka's broker serves it when a listener
//! requires it: before authentication only ApiVersions and SaslHandshake
//! (then SaslAuthenticate, or with SaslHandshake v0 bare tokens) are
//! served, and any other request closes the connection. The mechanisms
//! are PLAIN and SCRAM-SHA-256/512 (RFC 5802, 4096 iterations as Kafka's
//! credentials default to), for the users the builder was given.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

use crate::config::{SaslMechanism, SaslUser};

/// SCRAM's iteration count for the fake's credentials (Kafka's minimum
/// and the default of `kafka-configs --add-config SCRAM-SHA-256=[...]`).
pub const SCRAM_ITERATIONS: u32 = 4096;

/// A user's SCRAM credential: salt, stored key and server key.
#[derive(Debug, Clone)]
pub struct ScramCredential {
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

/// Every user's secrets, computed once when the cluster starts.
#[derive(Debug, Default)]
pub struct Credentials {
    plain: Vec<(String, String)>,
    scram: Vec<(SaslMechanism, String, ScramCredential)>,
    mechanisms: Vec<SaslMechanism>,
}

fn hmac_of(mechanism: SaslMechanism, key: &[u8], data: &[u8]) -> Vec<u8> {
    match mechanism {
        SaslMechanism::ScramSha512 => match Hmac::<Sha512>::new_from_slice(key) {
            Ok(mut mac) => {
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
            Err(_) => Vec::new(),
        },
        _ => match Hmac::<Sha256>::new_from_slice(key) {
            Ok(mut mac) => {
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
            Err(_) => Vec::new(),
        },
    }
}

fn hash_of(mechanism: SaslMechanism, data: &[u8]) -> Vec<u8> {
    match mechanism {
        SaslMechanism::ScramSha512 => Sha512::digest(data).to_vec(),
        _ => Sha256::digest(data).to_vec(),
    }
}

/// Some bytes unlikely to repeat: the fake's nonces and salts (not
/// secrets worth guarding: the fake is for tests).
fn unique(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    while out.len() < len {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_usize(out.len());
        out.extend_from_slice(&hasher.finish().to_be_bytes());
    }
    out.truncate(len);
    out
}

impl Credentials {
    /// The credentials of `users`.
    pub fn new(users: &[SaslUser]) -> Credentials {
        let mut credentials = Credentials::default();
        for user in users {
            if !credentials.mechanisms.contains(&user.mechanism) {
                credentials.mechanisms.push(user.mechanism);
            }
            match user.mechanism {
                SaslMechanism::Plain => credentials
                    .plain
                    .push((user.user.clone(), user.password.clone())),
                mechanism => {
                    let salt = unique(16);
                    let mut salted = vec![
                        0u8;
                        if mechanism == SaslMechanism::ScramSha512 {
                            64
                        } else {
                            32
                        }
                    ];
                    if mechanism == SaslMechanism::ScramSha512 {
                        pbkdf2::pbkdf2_hmac::<Sha512>(
                            user.password.as_bytes(),
                            &salt,
                            SCRAM_ITERATIONS,
                            &mut salted,
                        );
                    } else {
                        pbkdf2::pbkdf2_hmac::<Sha256>(
                            user.password.as_bytes(),
                            &salt,
                            SCRAM_ITERATIONS,
                            &mut salted,
                        );
                    }
                    let client_key = hmac_of(mechanism, &salted, b"Client Key");
                    credentials.scram.push((
                        mechanism,
                        user.user.clone(),
                        ScramCredential {
                            salt,
                            stored_key: hash_of(mechanism, &client_key),
                            server_key: hmac_of(mechanism, &salted, b"Server Key"),
                        },
                    ));
                }
            }
        }
        credentials
    }

    /// Whether any user is configured (then every listener requires SASL).
    pub fn required(&self) -> bool {
        !self.mechanisms.is_empty()
    }

    /// The enabled mechanisms' names, as SaslHandshake lists them.
    pub fn mechanism_names(&self) -> Vec<&'static str> {
        self.mechanisms.iter().map(|m| m.name()).collect()
    }

    /// The mechanism called `name`, if enabled.
    pub fn enabled(&self, name: &str) -> Option<SaslMechanism> {
        self.mechanisms.iter().copied().find(|m| m.name() == name)
    }

    fn scram(&self, mechanism: SaslMechanism, user: &str) -> Option<&ScramCredential> {
        self.scram
            .iter()
            .find(|(m, u, _)| *m == mechanism && u == user)
            .map(|(_, _, c)| c)
    }
}

/// Where an exchange stands.
#[derive(Debug, Clone)]
pub enum Exchange {
    /// PLAIN: one token.
    Plain,
    /// SCRAM: waiting for the client-first message.
    ScramFirst(SaslMechanism),
    /// SCRAM: waiting for the client-final message.
    ScramFinal {
        /// The mechanism.
        mechanism: SaslMechanism,
        /// The user.
        user: String,
        /// The nonce (client's and server's).
        nonce: String,
        /// client-first-bare + "," + server-first.
        auth_prefix: String,
    },
}

/// What one token leads to.
#[derive(Debug)]
pub enum Step {
    /// Send this challenge and wait for the next token.
    Continue(Vec<u8>, Exchange),
    /// Authenticated as this user; send this last message.
    Done(Vec<u8>, String),
    /// Refused, with Kafka's message.
    Failed(String),
}

const FAILED: &str = "Authentication failed: Invalid username or password";

/// Takes one token of an exchange.
pub fn step(credentials: &Credentials, exchange: &Exchange, token: &[u8]) -> Step {
    match exchange {
        Exchange::Plain => {
            // authzid NUL user NUL password
            let mut parts = token.split(|b| *b == 0);
            let (Some(authzid), Some(user), Some(password), None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Step::Failed("Invalid SASL/PLAIN response: expected 3 tokens".into());
            };
            let ok = credentials.plain.iter().any(|(u, p)| {
                u.as_bytes() == user
                    && p.as_bytes() == password
                    && (authzid.is_empty() || authzid == user)
            });
            if ok {
                Step::Done(Vec::new(), String::from_utf8_lossy(user).into_owned())
            } else {
                Step::Failed(FAILED.into())
            }
        }
        Exchange::ScramFirst(mechanism) => scram_first(credentials, *mechanism, token),
        Exchange::ScramFinal {
            mechanism,
            user,
            nonce,
            auth_prefix,
        } => scram_final(credentials, *mechanism, user, nonce, auth_prefix, token),
    }
}

fn scram_first(credentials: &Credentials, mechanism: SaslMechanism, token: &[u8]) -> Step {
    let Ok(text) = std::str::from_utf8(token) else {
        return Step::Failed("Invalid SCRAM client first message".into());
    };
    // gs2-header: "n,," or "y,," (or with an authzid "n,a=...,").
    let mut fields = text.splitn(3, ',');
    let (Some(binding), Some(_authzid), Some(bare)) = (fields.next(), fields.next(), fields.next())
    else {
        return Step::Failed("Invalid SCRAM client first message".into());
    };
    if binding != "n" && binding != "y" {
        return Step::Failed("Channel binding is not supported".into());
    }
    let attribute = |name: &str| bare.split(',').find_map(|a| a.strip_prefix(name));
    let (Some(user), Some(client_nonce)) = (attribute("n="), attribute("r=")) else {
        return Step::Failed("Invalid SCRAM client first message".into());
    };
    let user = user.replace("=2C", ",").replace("=3D", "=");
    let Some(credential) = credentials.scram(mechanism, &user) else {
        return Step::Failed(FAILED.into());
    };
    let nonce = format!("{client_nonce}{}", STANDARD.encode(unique(18)));
    let server_first = format!(
        "r={nonce},s={},i={SCRAM_ITERATIONS}",
        STANDARD.encode(&credential.salt)
    );
    Step::Continue(
        server_first.clone().into_bytes(),
        Exchange::ScramFinal {
            mechanism,
            user,
            nonce,
            auth_prefix: format!("{bare},{server_first}"),
        },
    )
}

fn scram_final(
    credentials: &Credentials,
    mechanism: SaslMechanism,
    user: &str,
    nonce: &str,
    auth_prefix: &str,
    token: &[u8],
) -> Step {
    let Ok(text) = std::str::from_utf8(token) else {
        return Step::Failed("Invalid SCRAM client final message".into());
    };
    let Some((without_proof, proof)) = text.rsplit_once(",p=") else {
        return Step::Failed("Invalid SCRAM client final message".into());
    };
    let got_nonce = without_proof
        .split(',')
        .find_map(|a| a.strip_prefix("r="))
        .unwrap_or_default();
    if got_nonce != nonce {
        return Step::Failed("Invalid SCRAM nonce".into());
    }
    let (Some(credential), Ok(proof)) =
        (credentials.scram(mechanism, user), STANDARD.decode(proof))
    else {
        return Step::Failed(FAILED.into());
    };
    let auth_message = format!("{auth_prefix},{without_proof}");
    let signature = hmac_of(mechanism, &credential.stored_key, auth_message.as_bytes());
    if proof.len() != signature.len() {
        return Step::Failed(FAILED.into());
    }
    let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(p, s)| p ^ s).collect();
    if hash_of(mechanism, &client_key) != credential.stored_key {
        return Step::Failed(FAILED.into());
    }
    let server_signature = hmac_of(mechanism, &credential.server_key, auth_message.as_bytes());
    Step::Done(
        format!("v={}", STANDARD.encode(server_signature)).into_bytes(),
        user.to_owned(),
    )
}

/// The first step of `mechanism`.
pub fn start(mechanism: SaslMechanism) -> Exchange {
    match mechanism {
        SaslMechanism::Plain => Exchange::Plain,
        other => Exchange::ScramFirst(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_checks_the_password() {
        let credentials = Credentials::new(&[SaslUser {
            mechanism: SaslMechanism::Plain,
            user: "u".into(),
            password: "p".into(),
        }]);
        assert!(matches!(
            step(&credentials, &Exchange::Plain, b"\0u\0p"),
            Step::Done(..)
        ));
        assert!(matches!(
            step(&credentials, &Exchange::Plain, b"\0u\0q"),
            Step::Failed(_)
        ));
        assert!(matches!(
            step(&credentials, &Exchange::Plain, b"u"),
            Step::Failed(_)
        ));
    }
}
