//! What the reader finds: exchanges, legacy SASL token exchanges, and
//! events for everything else.

use std::fmt;
use std::net::SocketAddr;

use bytes::Bytes;
use kafka_wire::frame::{Lenient, RequestParts, ResponseParts};
use kafka_wire::runtime::DecodeError;
use kafka_wire::{ApiKey, RequestBody};

use crate::time::Timestamp;

/// One thing found in a capture, in the order it was complete.
#[derive(Debug, Clone)]
pub enum Output {
    /// A request and the response paired with it by correlation id (or no
    /// response, when none is expected).
    Exchange(Exchange),
    /// A bare SASL token and its answer, after a SaslHandshake v0. The
    /// tokens themselves are not kept: they are secrets.
    SaslToken(SaslTokenExchange),
    /// Anything else worth saying.
    Event(Event),
}

/// A request and its response.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// When the request's last byte was captured.
    pub time: Timestamp,
    /// The client's address.
    pub client: SocketAddr,
    /// The broker's address.
    pub broker: SocketAddr,
    /// The api.
    pub api: ApiKey,
    /// The request's api version.
    pub version: i16,
    /// The correlation id.
    pub correlation_id: i32,
    /// The client id of the request header.
    pub client_id: Option<String>,
    /// The request frame, without its size prefix.
    pub request: Bytes,
    /// The response, `None` when none is expected (a Produce with
    /// `acks = 0`).
    pub response: Option<Response>,
}

/// A response as captured.
#[derive(Debug, Clone)]
pub struct Response {
    /// When its last byte was captured.
    pub time: Timestamp,
    /// The response frame, without its size prefix.
    pub frame: Bytes,
}

impl Exchange {
    /// The request's header and body bytes.
    pub fn request_parts(&self) -> Result<RequestParts<'_>, DecodeError> {
        RequestParts::split(&self.request)
    }

    /// The request's body, read as Kafka's broker reads it: bytes after
    /// the body are ignored and counted (see
    /// [`RequestParts::decode_body_lenient`]). Allocates nothing: arrays of
    /// structs stay checked wire bytes, decoded when read.
    pub fn request_body(&self) -> Result<Lenient<RequestBody<'_>>, DecodeError> {
        self.request_parts()?.decode_body_lenient_without_heap()
    }

    /// The response's header and body bytes, at the version its body is
    /// written at (an ApiVersions answer to an unsupported version is v0).
    pub fn response_parts(&self) -> Option<Result<ResponseParts<'_>, DecodeError>> {
        self.response
            .as_ref()
            .map(|response| ResponseParts::split(&response.frame, self.api, self.version))
    }

    /// Microseconds from the request to the response.
    pub fn latency_us(&self) -> Option<i64> {
        self.response
            .as_ref()
            .map(|response| response.time.micros_since(self.time))
    }
}

/// A bare SASL token exchange (the legacy form, after a SaslHandshake v0):
/// what the proxy log says of it, never the tokens.
#[derive(Debug, Clone)]
pub struct SaslTokenExchange {
    /// When the client's token was captured.
    pub time: Timestamp,
    /// The client's address.
    pub client: SocketAddr,
    /// The broker's address.
    pub broker: SocketAddr,
    /// The mechanism the handshake named.
    pub mechanism: String,
    /// Which exchange of the authentication this is, from 1.
    pub round: u32,
    /// The client id of the handshake.
    pub client_id: Option<String>,
    /// The size of the client's token.
    pub client_bytes: usize,
    /// The size of the broker's answer.
    pub broker_bytes: usize,
}

/// The kinds of event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// Bytes of a stream were not captured (a lost segment, the snap
    /// length, a hole never filled); the frame they were in is dropped.
    Gap,
    /// Bytes skipped to find a frame boundary (a capture started
    /// mid-connection, or after a gap).
    Resync,
    /// A response whose request was not captured.
    UnpairedResponse,
    /// A request never answered before its connection ended (or the
    /// capture did, or a later request's answer came first).
    Unanswered,
    /// The stream is TLS; it is skipped.
    Tls,
    /// A frame that does not decode, or a stream that cannot be followed.
    Undecodable,
    /// A connection dropped to stay within the memory cap.
    Evicted,
    /// The capture file ends inside a block, or a block does not parse.
    TruncatedFile,
    /// Which side of a connection captured mid-stream is the client was
    /// decided by a rule that is not sure (no SYN, no port of
    /// [`Config::ports`](crate::Config::ports) or Kafka's, and no response
    /// seen answering a request): the detail names the rule and what it
    /// saw.
    Direction,
}

impl EventKind {
    /// Every kind, in order.
    pub const ALL: [EventKind; 9] = [
        EventKind::Gap,
        EventKind::Resync,
        EventKind::UnpairedResponse,
        EventKind::Unanswered,
        EventKind::Tls,
        EventKind::Undecodable,
        EventKind::Evicted,
        EventKind::TruncatedFile,
        EventKind::Direction,
    ];

    /// The kind's name in the JSON form: `gap`, `resync`,
    /// `unpaired-response`, `unanswered`, `tls`, `undecodable`, `evicted`,
    /// `truncated-file`, `direction`.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Gap => "gap",
            EventKind::Resync => "resync",
            EventKind::UnpairedResponse => "unpaired-response",
            EventKind::Unanswered => "unanswered",
            EventKind::Tls => "tls",
            EventKind::Undecodable => "undecodable",
            EventKind::Evicted => "evicted",
            EventKind::TruncatedFile => "truncated-file",
            EventKind::Direction => "direction",
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Something that is not an exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What kind.
    pub kind: EventKind,
    /// When (the packet that showed it; the last packet's time for what
    /// the end of the capture shows).
    pub time: Timestamp,
    /// The client's address (`None` for a file event; for a connection
    /// whose roles are not known, the side that sent first).
    pub client: Option<SocketAddr>,
    /// The broker's address.
    pub broker: Option<SocketAddr>,
    /// What happened, for a person.
    pub detail: String,
}
