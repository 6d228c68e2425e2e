//! SASL's legacy form: after a SaslHandshake v0, the client and the broker
//! exchange the mechanism's tokens as bare size-prefixed frames, with no
//! Kafka header (KIP-43; SaslAuthenticate, KIP-152, replaced it, but brokers
//! still accept it). A proxy must not read a header from those frames.
//!
//! Nothing in such a frame says whether it is a token or a request, so the
//! connection counts tokens the way the mechanism's broker side does: PLAIN
//! takes one client token, SCRAM-SHA-256 and SCRAM-SHA-512 two (client-first
//! and client-final), OAUTHBEARER one, and one more (the client's `0x01`)
//! when the broker answers the first with an error. The broker answers each
//! token with one bare frame (empty for PLAIN), after every earlier
//! response. Then Kafka requests follow again. For any other mechanism
//! (GSSAPI's token count depends on the Kerberos exchange) the end cannot be
//! told apart, so the rest of the connection is relayed as frames, untouched
//! and undecoded ([`Connection::is_opaque`](crate::Connection::is_opaque)).
//!
//! This module is public so that every reader of Kafka traffic (the proxy's
//! [`Connection`](crate::Connection), the capture reader of
//! kafka-wire-capture) tracks the legacy exchange by the one rule:
//! [`legacy_mechanism`] tells whether a request starts it, [`Legacy`] counts
//! the tokens and [`handshake_refused`] reads the handshake's answer.

use std::sync::Arc;

use bytes::Bytes;
use kafka_wire::messages::{SaslHandshakeRequest, SaslHandshakeResponse};
use kafka_wire::runtime::Message;
use kafka_wire::ApiKey;

/// One token exchange of the legacy form, as [`crate::Filter::on_sasl_token`]
/// sees it when the broker's answer arrives. Both frames were forwarded
/// untouched.
///
/// The tokens are secrets (a PLAIN token holds the password, a SCRAM token
/// a proof of it): a filter that logs must log no more than the mechanism,
/// the round and the sizes.
#[derive(Debug)]
pub struct SaslToken<'a> {
    /// The mechanism the SaslHandshake v0 named, such as `PLAIN`.
    pub mechanism: &'a str,
    /// Which exchange of the authentication this is, from 1.
    pub round: u32,
    /// The client id of the SaslHandshake request.
    pub client_id: Option<&'a str>,
    /// The size of the client's token.
    pub client_token_len: usize,
    /// The client's token, when [`crate::Config::keep_request_bodies`] is
    /// set; otherwise `None`.
    pub client_token: Option<&'a [u8]>,
    /// The broker's answer (empty for PLAIN).
    pub broker_token: &'a [u8],
}

/// How the legacy exchange of a mechanism ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounds {
    /// After this many client tokens.
    Fixed(u32),
    /// OAUTHBEARER: one token, and a second when the broker's first answer
    /// is not empty (an error, which the client acknowledges).
    OAuthBearer,
}

impl Rounds {
    /// The tokens the mechanism takes, or `None` when that cannot be known.
    pub fn of(mechanism: &str) -> Option<Rounds> {
        match mechanism {
            "PLAIN" => Some(Rounds::Fixed(1)),
            "SCRAM-SHA-256" | "SCRAM-SHA-512" => Some(Rounds::Fixed(2)),
            "OAUTHBEARER" => Some(Rounds::OAuthBearer),
            _ => None,
        }
    }
}

/// The legacy exchange under way on one connection: which client frames
/// are tokens, and when Kafka requests follow again.
#[derive(Debug)]
pub struct Legacy {
    pub(crate) mechanism: Arc<str>,
    pub(crate) client_id: Option<Arc<str>>,
    rounds: Rounds,
    /// Client tokens seen so far.
    sent: u32,
    /// Client tokens the mechanism allows so far.
    allowed: u32,
    /// The correlation id of the SaslHandshake v0, until its response.
    pub(crate) handshake: Option<i32>,
}

impl Legacy {
    /// The exchange a SaslHandshake v0 with correlation id `handshake`
    /// starts, for `mechanism` (whose tokens `rounds` counts).
    pub fn new(mechanism: &str, client_id: Option<&str>, rounds: Rounds, handshake: i32) -> Self {
        Legacy {
            mechanism: mechanism.into(),
            client_id: client_id.map(Into::into),
            rounds,
            sent: 0,
            allowed: match rounds {
                Rounds::Fixed(n) => n,
                Rounds::OAuthBearer => 1,
            },
            handshake: Some(handshake),
        }
    }

    /// Whether the client's next frame is a token; if so, counts it and
    /// returns its round.
    pub fn take_client_token(&mut self) -> Option<u32> {
        (self.sent < self.allowed).then(|| {
            self.sent += 1;
            self.sent
        })
    }

    /// The broker answered the token of `round`.
    pub fn answered(&mut self, round: u32, answer: &[u8]) {
        if self.rounds == Rounds::OAuthBearer && round == 1 && !answer.is_empty() {
            self.allowed = 2;
        }
    }

    /// The handshake failed: no tokens follow.
    pub fn refused(&mut self) {
        self.allowed = self.sent;
    }

    /// Whether every token the mechanism allows has been sent.
    pub fn tokens_done(&self) -> bool {
        self.sent >= self.allowed
    }

    /// The mechanism the handshake named.
    pub fn mechanism(&self) -> &str {
        &self.mechanism
    }

    /// The client id of the handshake request.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The correlation id of the handshake, until its response is seen.
    pub fn handshake(&self) -> Option<i32> {
        self.handshake
    }

    /// The handshake's response was seen; `refused` when it was an error,
    /// after which no tokens follow.
    pub fn handshake_answered(&mut self, refused: bool) {
        self.handshake = None;
        if refused {
            self.refused();
        }
    }
}

/// Whether a request starts the legacy exchange: for a SaslHandshake v0,
/// the mechanism it names (empty when its body does not decode), and the
/// way its tokens are counted (`None` when they cannot be: GSSAPI and any
/// other mechanism, after which a reader cannot tell tokens from requests).
/// `None` for any other request.
pub fn legacy_mechanism(
    api: ApiKey,
    version: i16,
    body: &[u8],
) -> Option<(String, Option<Rounds>)> {
    if api != ApiKey::SaslHandshake || version != 0 {
        return None;
    }
    let mechanism = SaslHandshakeRequest::decode(body, 0)
        .map(|handshake| handshake.mechanism.into_owned())
        .unwrap_or_default();
    let rounds = Rounds::of(&mechanism);
    Some((mechanism, rounds))
}

/// Whether the broker refused a SaslHandshake v0 (or answered with a body
/// that does not decode), from its response body.
pub fn handshake_refused(body: &[u8]) -> bool {
    SaslHandshakeResponse::decode(body, 0).map_or(true, |handshake| handshake.error_code != 0)
}

/// A client token awaiting the broker's bare answer.
#[derive(Debug)]
pub(crate) struct PendingToken {
    pub(crate) mechanism: Arc<str>,
    pub(crate) client_id: Option<Arc<str>>,
    pub(crate) round: u32,
    pub(crate) client_token_len: usize,
    pub(crate) client_token: Option<Bytes>,
}

impl PendingToken {
    /// The bytes it keeps: the client's token, when kept.
    pub(crate) fn held_bytes(&self) -> usize {
        self.client_token.as_ref().map_or(0, Bytes::len)
    }
}
