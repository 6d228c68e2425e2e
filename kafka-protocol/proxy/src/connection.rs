//! The connection state machine: bytes in from both peers, frames through a
//! filter, bytes out to both peers. It does no I/O.

use std::collections::VecDeque;

use bytes::Bytes;

use kafka_wire::frame::{FrameError, FrameSplitter, ResponseFrame, DEFAULT_MAX_FRAME_SIZE};
use kafka_wire::messages::ResponseHeader;
use kafka_wire::runtime::EncodeError;
use kafka_wire::ApiKey;

use super::error::{ProxyError, Side};
use super::filter::{Filter, RequestAction, ResponseAction};
use super::outgoing::Outgoing;
use super::proxied::{correlation_id, ProxiedRequest, ProxiedResponse};
use super::sasl::{handshake_refused, legacy_mechanism, Legacy, PendingToken, SaslToken};

/// The default maximum of requests awaiting an answer on one connection.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// Limits and options of one proxied connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The largest frame accepted from either side, without its size
    /// prefix. A larger one fails the connection as soon as its size prefix
    /// is read.
    pub max_frame_size: usize,
    /// The most requests awaiting an answer; one more fails the connection.
    pub max_in_flight: usize,
    /// Whether requests in flight keep their bodies, so that
    /// [`Filter::on_response`] can decode them (a log does). Off, only
    /// their headers are kept.
    pub keep_request_bodies: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            keep_request_bodies: false,
        }
    }
}

/// A request awaiting its answer, in the order the client sent it.
#[derive(Debug)]
struct InFlight {
    awaiting: Awaiting,
    /// The answer, size prefix included, once known: answers leave in
    /// request order.
    answer: Option<Outgoing>,
}

/// What the client sent and the broker has yet to answer.
#[derive(Debug)]
enum Awaiting {
    /// A Kafka request, answered by a response with its correlation id.
    Request(ProxiedRequest),
    /// A bare SASL token after a SaslHandshake v0, answered by the broker's
    /// next bare frame.
    SaslToken(PendingToken),
}

/// One client connection through the proxy, as a state machine.
///
/// Feed it what the client sent ([`Connection::feed_client`]) and what the
/// broker sent ([`Connection::feed_broker`]), in pieces of any size; take
/// what to send on with [`Connection::take_for_broker`] and
/// [`Connection::take_for_client`]. Responses are matched to requests by
/// correlation id and reach the client in request order. Memory is bounded
/// by the maximum frame size and the maximum in flight; any error fails
/// this connection only, and every later call returns
/// [`ProxyError::Closed`].
#[derive(Debug)]
pub struct Connection {
    config: Config,
    from_client: FrameSplitter,
    from_broker: FrameSplitter,
    in_flight: VecDeque<InFlight>,
    for_broker: Outgoing,
    for_client: Outgoing,
    failed: bool,
    /// The legacy SASL exchange under way, after a SaslHandshake v0.
    legacy_sasl: Option<Legacy>,
    /// After a SaslHandshake v0 for a mechanism whose token count is not
    /// known: the client's frames from then on, and the broker's once the
    /// handshake is answered, are relayed untouched.
    opaque: bool,
    /// Whole frames received from either side so far.
    frames: u64,
}

impl Connection {
    /// A connection with these limits.
    pub fn new(config: Config) -> Self {
        Connection {
            config,
            from_client: FrameSplitter::new(config.max_frame_size),
            from_broker: FrameSplitter::new(config.max_frame_size),
            in_flight: VecDeque::new(),
            for_broker: Outgoing::default(),
            for_client: Outgoing::default(),
            failed: false,
            legacy_sasl: None,
            opaque: false,
            frames: 0,
        }
    }

    /// Whether the connection relays every frame untouched from now on:
    /// after a SaslHandshake v0 for a mechanism other than PLAIN,
    /// SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (such as GSSAPI), whose
    /// bare tokens cannot be told apart from the requests that follow them.
    /// The filter sees no more frames.
    pub fn is_opaque(&self) -> bool {
        self.opaque
    }

    /// The mechanism of the legacy SASL exchange under way (after a
    /// SaslHandshake v0, until its last token is answered).
    pub fn legacy_sasl_mechanism(&self) -> Option<&str> {
        self.legacy_sasl.as_ref().map(|l| &*l.mechanism)
    }

    /// Its limits.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Requests awaiting an answer.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Bytes received that do not make a whole frame yet, from the client
    /// and from the broker.
    pub fn buffered(&self) -> (usize, usize) {
        (self.from_client.buffered(), self.from_broker.buffered())
    }

    /// Whole frames received from either side so far: a connection whose
    /// count does not move is idle, whatever partial bytes trickle in.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Every byte the connection holds: partial frames from both sides,
    /// output not yet taken, answers parked behind an earlier one, and the
    /// requests in flight (their headers, or their whole frames when
    /// [`Config::keep_request_bodies`] is set).
    pub fn held_bytes(&self) -> usize {
        let (client, broker) = self.buffered();
        let in_flight: usize = self
            .in_flight
            .iter()
            .map(|entry| {
                let answer = entry.answer.as_ref().map_or(0, Outgoing::len);
                let request = match &entry.awaiting {
                    Awaiting::Request(request) => request.frame().len(),
                    Awaiting::SaslToken(token) => token.held_bytes(),
                };
                answer + request
            })
            .sum();
        client + broker + self.for_broker.len() + self.for_client.len() + in_flight
    }

    /// Takes bytes the client sent, and passes every whole request they
    /// complete through `filter`.
    pub fn feed_client<F: Filter + ?Sized>(
        &mut self,
        bytes: &[u8],
        filter: &mut F,
    ) -> Result<(), ProxyError> {
        self.guard(|c| {
            c.from_client.push(bytes);
            while let Some(frame) = next_frame(&mut c.from_client, Side::Client)? {
                c.frames += 1;
                c.request(frame, filter)?;
            }
            Ok(())
        })
    }

    /// Takes bytes the broker sent, and passes every whole response they
    /// complete through `filter`.
    pub fn feed_broker<F: Filter + ?Sized>(
        &mut self,
        bytes: &[u8],
        filter: &mut F,
    ) -> Result<(), ProxyError> {
        self.guard(|c| {
            c.from_broker.push(bytes);
            while let Some(frame) = next_frame(&mut c.from_broker, Side::Broker)? {
                c.frames += 1;
                c.response(frame, filter)?;
            }
            c.release();
            Ok(())
        })
    }

    /// Bytes to write to the broker, taken out of the connection.
    pub fn take_for_broker(&mut self) -> Outgoing {
        self.for_broker.take()
    }

    /// Bytes to write to the client, taken out of the connection.
    pub fn take_for_client(&mut self) -> Outgoing {
        self.for_client.take()
    }

    /// Whether an earlier call failed.
    pub fn is_failed(&self) -> bool {
        self.failed
    }

    fn guard(
        &mut self,
        run: impl FnOnce(&mut Self) -> Result<(), ProxyError>,
    ) -> Result<(), ProxyError> {
        if self.failed {
            return Err(ProxyError::Closed);
        }
        let result = run(self);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    fn request<F: Filter + ?Sized>(
        &mut self,
        frame: Bytes,
        filter: &mut F,
    ) -> Result<(), ProxyError> {
        if self.opaque {
            return self
                .for_broker
                .push_frame(&[], &frame)
                .map_err(|e| encode_error(Side::Broker, e));
        }
        if let Some(round) = self
            .legacy_sasl
            .as_mut()
            .and_then(Legacy::take_client_token)
        {
            return self.sasl_token(frame, round);
        }
        let request = ProxiedRequest::parse(frame)?;
        if request.expects_response() && self.in_flight.len() >= self.config.max_in_flight {
            return Err(ProxyError::TooManyInFlight {
                max: self.config.max_in_flight,
            });
        }
        let action = filter
            .on_request(&request)
            .map_err(|source| ProxyError::FilterDecode {
                side: Side::Client,
                source,
            })?;
        let mut answer = None;
        match action {
            RequestAction::Forward => self
                .for_broker
                .push_frame(&[], request.frame_bytes())
                .map_err(|e| encode_error(Side::Broker, e))?,
            RequestAction::Replace(body) => {
                let version = request.api_version();
                let mut encoded = Vec::new();
                body.encode(&mut encoded, version)
                    .map_err(|e| encode_error(Side::Broker, e))?;
                self.for_broker
                    .push_frame(request.header_bytes(), &Bytes::from(encoded))
                    .map_err(|e| encode_error(Side::Broker, e))?;
            }
            RequestAction::Respond(body) => {
                let response = ResponseFrame {
                    header: ResponseHeader {
                        correlation_id: request.correlation_id(),
                        ..Default::default()
                    },
                    body,
                    version: request.api_version(),
                };
                let mut encoded = Vec::new();
                response
                    .encode(&mut encoded)
                    .map_err(|e| encode_error(Side::Client, e))?;
                let mut out = Outgoing::default();
                out.push_frame(&[], &Bytes::from(encoded))
                    .map_err(|e| encode_error(Side::Client, e))?;
                answer = Some(out);
            }
        }
        if !request.expects_response() {
            filter.on_unanswered(&request);
            return Ok(());
        }
        // What the broker makes of the frames that follow a SaslHandshake
        // v0 it is sent: bare tokens (it is not sent when a filter answers).
        if answer.is_none() {
            self.note_legacy_handshake(&request);
        }
        let request = if self.config.keep_request_bodies {
            request
        } else {
            request.header_only()
        };
        self.in_flight.push_back(InFlight {
            awaiting: Awaiting::Request(request),
            answer,
        });
        self.release();
        Ok(())
    }

    /// A SaslHandshake v0 starts the legacy exchange: the client's next
    /// frames are bare tokens (see [`super::sasl`]).
    fn note_legacy_handshake(&mut self, request: &ProxiedRequest) {
        if request.api() != Some(ApiKey::SaslHandshake) || request.api_version() != 0 {
            return;
        }
        let Some((mechanism, rounds)) =
            legacy_mechanism(ApiKey::SaslHandshake, 0, request.body_bytes())
        else {
            return;
        };
        match rounds {
            Some(rounds) => {
                let client_id = request.client_id();
                self.legacy_sasl = Some(Legacy::new(
                    &mechanism,
                    client_id.as_deref(),
                    rounds,
                    request.correlation_id(),
                ));
            }
            None => self.opaque = true,
        }
    }

    /// Forwards a bare SASL token, to be answered by the broker's next
    /// bare frame.
    fn sasl_token(&mut self, frame: Bytes, round: u32) -> Result<(), ProxyError> {
        if self.in_flight.len() >= self.config.max_in_flight {
            return Err(ProxyError::TooManyInFlight {
                max: self.config.max_in_flight,
            });
        }
        self.for_broker
            .push_frame(&[], &frame)
            .map_err(|e| encode_error(Side::Broker, e))?;
        let Some(legacy) = &self.legacy_sasl else {
            return Ok(());
        };
        let token = PendingToken {
            mechanism: legacy.mechanism.clone(),
            client_id: legacy.client_id.clone(),
            round,
            client_token_len: frame.len(),
            client_token: self.config.keep_request_bodies.then_some(frame),
        };
        self.in_flight.push_back(InFlight {
            awaiting: Awaiting::SaslToken(token),
            answer: None,
        });
        Ok(())
    }

    fn response<F: Filter + ?Sized>(
        &mut self,
        frame: Bytes,
        filter: &mut F,
    ) -> Result<(), ProxyError> {
        let oldest = self.in_flight.iter().position(|e| e.answer.is_none());
        if oldest.is_none() && self.opaque {
            return self
                .for_client
                .push_frame(&[], &frame)
                .map_err(|e| encode_error(Side::Client, e));
        }
        if let Some(index) = oldest {
            if matches!(self.in_flight[index].awaiting, Awaiting::SaslToken(_)) {
                return self.sasl_answer(index, frame, filter);
            }
        }
        let correlation_id = correlation_id(&frame).map_err(|source| ProxyError::BadHeader {
            side: Side::Broker,
            source,
        })?;
        let index = self
            .in_flight
            .iter()
            .position(|entry| {
                entry.answer.is_none()
                    && matches!(&entry.awaiting,
                        Awaiting::Request(r) if r.correlation_id() == correlation_id)
            })
            .ok_or(ProxyError::UnknownCorrelationId { correlation_id })?;
        let Awaiting::Request(request) = &self.in_flight[index].awaiting else {
            return Err(ProxyError::UnknownCorrelationId { correlation_id });
        };
        let response = ProxiedResponse::parse(frame, request)?;
        let handshake_refused = legacy_handshake_refused(self.legacy_sasl.as_ref(), &response);
        let action =
            filter
                .on_response(request, &response)
                .map_err(|source| ProxyError::FilterDecode {
                    side: Side::Broker,
                    source,
                })?;
        // The answer to the oldest request goes straight to the client;
        // a later one waits in its slot.
        let mut later = Outgoing::default();
        let out = if index == 0 {
            &mut self.for_client
        } else {
            &mut later
        };
        match action {
            ResponseAction::Forward => out
                .push_frame(&[], response.frame_bytes())
                .map_err(|e| encode_error(Side::Client, e))?,
            ResponseAction::Replace(body) => {
                let version = response.version();
                let mut encoded = Vec::new();
                body.encode(&mut encoded, version)
                    .map_err(|e| encode_error(Side::Client, e))?;
                out.push_frame(response.header_bytes(), &Bytes::from(encoded))
                    .map_err(|e| encode_error(Side::Client, e))?;
            }
        }
        if index == 0 {
            self.in_flight.pop_front();
        } else {
            self.in_flight[index].answer = Some(later);
        }
        if let Some(refused) = handshake_refused {
            if let Some(legacy) = &mut self.legacy_sasl {
                // No tokens follow a refused handshake.
                legacy.handshake_answered(refused);
                if refused {
                    self.end_legacy_sasl_if_done();
                }
            }
        }
        Ok(())
    }

    /// The broker's bare answer to the oldest token in flight.
    fn sasl_answer<F: Filter + ?Sized>(
        &mut self,
        index: usize,
        frame: Bytes,
        filter: &mut F,
    ) -> Result<(), ProxyError> {
        let Awaiting::SaslToken(token) = &self.in_flight[index].awaiting else {
            return Ok(());
        };
        filter.on_sasl_token(&SaslToken {
            mechanism: &token.mechanism,
            round: token.round,
            client_id: token.client_id.as_deref(),
            client_token_len: token.client_token_len,
            client_token: token.client_token.as_deref(),
            broker_token: &frame,
        });
        if let Some(legacy) = &mut self.legacy_sasl {
            legacy.answered(token.round, &frame);
        }
        let mut answer = Outgoing::default();
        answer
            .push_frame(&[], &frame)
            .map_err(|e| encode_error(Side::Client, e))?;
        self.in_flight[index].answer = Some(answer);
        self.end_legacy_sasl_if_done();
        Ok(())
    }

    /// Kafka requests follow once every token is sent and answered.
    fn end_legacy_sasl_if_done(&mut self) {
        let tokens_pending = self
            .in_flight
            .iter()
            .any(|e| e.answer.is_none() && matches!(e.awaiting, Awaiting::SaslToken(_)));
        if !tokens_pending && self.legacy_sasl.as_ref().is_some_and(Legacy::tokens_done) {
            self.legacy_sasl = None;
        }
    }

    /// Moves the answers at the front of the queue, in request order, to
    /// the client's output.
    fn release(&mut self) {
        while self.in_flight.front().is_some_and(|e| e.answer.is_some()) {
            if let Some(answer) = self.in_flight.pop_front().and_then(|e| e.answer) {
                self.for_client.append(answer);
            }
        }
    }
}

/// For the response to the SaslHandshake v0 that started `legacy`: whether
/// the broker refused it. `None` for any other response.
fn legacy_handshake_refused(legacy: Option<&Legacy>, response: &ProxiedResponse) -> Option<bool> {
    let legacy = legacy?;
    (legacy.handshake() == Some(response.correlation_id()))
        .then(|| handshake_refused(response.body_bytes()))
}

/// The next whole frame from `side`, a refused size prefix failing the
/// connection.
fn next_frame(splitter: &mut FrameSplitter, side: Side) -> Result<Option<Bytes>, ProxyError> {
    splitter.next_frame().map_err(|error| match error {
        FrameError::NegativeSize(size) => ProxyError::NegativeSize { side, size },
        FrameError::TooLarge { size, max } => ProxyError::FrameTooLarge { side, size, max },
    })
}

fn encode_error(side: Side, source: EncodeError) -> ProxyError {
    ProxyError::Encode { side, source }
}
