//! One client connection: requests are read and answered one at a time, in
//! order, as Kafka's broker does (it reads the next request once the
//! previous one is answered). A client may pipeline: requests it sends
//! ahead wait in the socket and are answered in the order sent.
//!
//! Limits: a frame larger than `max_request_size` closes the connection
//! before its body is read, and so does a connection that sends no
//! complete frame within the idle timeout.
//!
//! SASL: when the cluster has users, a connection must authenticate
//! first (SaslHandshake, then SaslAuthenticate or, after SaslHandshake v0,
//! bare tokens); before that only ApiVersions and SaslHandshake are
//! served and any other request closes the connection, as Kafka does
//! (once the handshake has chosen a mechanism, after answering it with
//! ILLEGAL_SASL_STATE).

use std::net::SocketAddr;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use kafka_wire::api_versions::unsupported_api_versions_reply;
use kafka_wire::frame::{peek_request, FrameCodec, RequestFrame, ResponseFrame};
use kafka_wire::messages::{ResponseHeader, SaslAuthenticateResponse, SaslHandshakeResponse};
use kafka_wire::runtime::DecodeError;
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

use crate::capture::{Direction, FrameInfo};
use crate::control::errors::error_response;
use crate::dispatch::{self, Context, Outcome, ANONYMOUS};
use crate::sasl::{self, Exchange, Step};
use crate::state::Shared;
use crate::versions;

/// The most bytes a response may take; a larger one (which Fetch's size
/// limits keep from happening) closes the connection before it is encoded.
const MAX_RESPONSE_SIZE: usize = kafka_wire::frame::DEFAULT_MAX_FRAME_SIZE;

/// What to do after a request.
enum Reply {
    /// Send this frame (without size prefix).
    Frame(Vec<u8>),
    /// Send nothing.
    Nothing,
    /// Close the connection, for this reason.
    Close(String),
    /// Send this frame, then close the connection (a failed
    /// authentication).
    FrameThenClose(Vec<u8>, String),
}

/// Where a connection stands with SASL.
#[derive(Debug)]
enum Auth {
    /// No SASL needed, or authenticated (as this user).
    Open(Option<String>),
    /// SaslHandshake expected.
    Handshake,
    /// SaslAuthenticate requests carry the tokens.
    Tokens(Exchange),
    /// Bare tokens follow (after SaslHandshake v0).
    Legacy(Exchange),
}

/// Serves one connection until the client closes it or sends something
/// that cannot be answered.
pub async fn serve(
    shared: Arc<Shared>,
    node_id: i32,
    stream: TcpStream,
    peer: SocketAddr,
    id: u64,
) {
    let _ = stream.set_nodelay(true);
    let mut frames = Framed::new(stream, FrameCodec::new(shared.config.max_request_size));
    let host = peer.ip().to_string();
    let mut auth = if shared.credentials.required() {
        Auth::Handshake
    } else {
        Auth::Open(None)
    };
    loop {
        let next = tokio::time::timeout(shared.config.idle_timeout, frames.next()).await;
        let frame = match next {
            Err(_) => {
                eprintln!("broker {node_id}: connection {id} ({peer}): closing: idle");
                break;
            }
            Ok(None) => break,
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => {
                eprintln!("broker {node_id}: connection {id} ({peer}): closing: {e}");
                break;
            }
        };
        let reply = if let Auth::Legacy(exchange) = &auth {
            // A bare token, answered bare.
            match sasl::step(&shared.credentials, exchange, &frame) {
                Step::Continue(challenge, next) => {
                    auth = Auth::Legacy(next);
                    Reply::Frame(challenge)
                }
                Step::Done(last, user) => {
                    auth = Auth::Open(Some(user));
                    Reply::Frame(last)
                }
                Step::Failed(why) => Reply::Close(why),
            }
        } else {
            answer(&shared, node_id, &host, id, &frame, &mut auth).await
        };
        match reply {
            Reply::Frame(response) => {
                if let Err(e) = frames.send(response).await {
                    eprintln!("broker {node_id}: connection {id} ({peer}): {e}");
                    break;
                }
            }
            Reply::FrameThenClose(response, reason) => {
                let _ = frames.send(response).await;
                eprintln!("broker {node_id}: connection {id} ({peer}): closing: {reason}");
                break;
            }
            Reply::Nothing => {}
            Reply::Close(reason) => {
                eprintln!("broker {node_id}: connection {id} ({peer}): closing: {reason}");
                break;
            }
        }
    }
}

/// Decodes a request frame as Kafka's broker reads one: bytes after the
/// body are ignored ([`RequestFrame::decode_lenient`]). librdkafka 2.16's
/// admin client sends a Metadata v13 for every topic with three bytes after
/// its body, which Kafka answers.
fn decode_request(frame: &[u8]) -> Result<RequestFrame<'_>, DecodeError> {
    RequestFrame::decode_lenient(frame).map(|lenient| lenient.value)
}

/// Decodes one request frame, has it dispatched, and encodes the answer,
/// recording both when capturing.
async fn answer(
    shared: &Arc<Shared>,
    node_id: i32,
    host: &str,
    connection: u64,
    frame: &[u8],
    auth: &mut Auth,
) -> Reply {
    let peek = match peek_request(frame) {
        Ok(peek) => peek,
        Err(e) => return Reply::Close(format!("unreadable request header: {e}")),
    };
    let decoded = decode_request(frame);
    let client_id = decoded
        .as_ref()
        .ok()
        .and_then(|request| request.header.client_id.as_deref());
    let info = FrameInfo {
        connection,
        api_key: peek.api_key,
        api_version: peek.api_version,
        correlation_id: peek.correlation_id,
        client_id,
    };
    if let Some(capture) = &shared.capture {
        capture.record(Direction::Request, &info, frame);
    }
    let Some(api) = peek.api() else {
        return Reply::Close(format!("unknown api key {}", peek.api_key));
    };
    let caps = &shared.version_caps();
    let implemented = versions::range(api, caps).is_some();
    let (body, version) = if api == ApiKey::ApiVersions
        && !versions::serves(api, peek.api_version, caps)
    {
        // The client retries with a version from this v0 reply.
        (
            ResponseBody::ApiVersions(unsupported_api_versions_reply()),
            0,
        )
    } else if implemented && !versions::serves(api, peek.api_version, caps) {
        // No version both sides speak: Kafka closes the connection.
        return Reply::Close(format!(
            "{} v{} is not supported",
            api.name(),
            peek.api_version
        ));
    } else {
        let request = match &decoded {
            Ok(request) => request,
            Err(e) => return Reply::Close(format!("undecodable {} request: {e}", api.name())),
        };
        let version = peek.api_version;
        match (&request.body, &*auth) {
            (RequestBody::SaslAuthenticate(r), Auth::Tokens(_)) => {
                let (body, failed) = authenticate(shared, &r.auth_bytes, auth);
                return finish(shared, &info, body, version, failed);
            }
            // Between SaslHandshake (v1 on) and the end of the exchange,
            // Kafka answers any other request with its error response
            // (ILLEGAL_SASL_STATE), then closes the connection.
            (_, Auth::Tokens(_)) => {
                let why = format!(
                    "unexpected {} request during SASL authentication",
                    api.name()
                );
                let body =
                    error_response(&request.body, version, ErrorCode::IllegalSaslState.code());
                return finish(shared, &info, body, version, Some(why));
            }
            (RequestBody::SaslHandshake(r), _) => {
                return finish(
                    shared,
                    &info,
                    handshake(shared, &r.mechanism, version, auth),
                    version,
                    None,
                );
            }
            // Without SASL, or once authenticated, Kafka's request
            // handler answers ILLEGAL_SASL_STATE and keeps the
            // connection.
            (RequestBody::SaslAuthenticate(_), Auth::Open(_)) => {
                let body = ResponseBody::SaslAuthenticate(SaslAuthenticateResponse {
                    error_code: ErrorCode::IllegalSaslState.code(),
                    error_message: Some(
                        "SaslAuthenticate request received after successful authentication".into(),
                    ),
                    ..Default::default()
                });
                return finish(shared, &info, body, version, None);
            }
            // Kafka closes a connection that authenticates before its
            // handshake, without an answer.
            (RequestBody::SaslAuthenticate(_), _) => {
                return Reply::Close("SaslAuthenticate before SaslHandshake".into())
            }
            (RequestBody::ApiVersions(_), _) | (_, Auth::Open(_)) => {}
            _ => {
                return Reply::Close(format!(
                    "unexpected {} request before authentication",
                    api.name()
                ))
            }
        }
        let principal = match &*auth {
            Auth::Open(Some(user)) => user.as_str(),
            _ => ANONYMOUS,
        };
        let context = Context {
            shared,
            node_id,
            version: peek.api_version,
            client_id: client_id.unwrap_or(""),
            client_host: host,
            connection,
            principal,
        };
        match dispatch::dispatch(&context, &request.body).await {
            Outcome::Respond(body) => (*body, peek.api_version),
            Outcome::NoResponse => return Reply::Nothing,
            Outcome::Close(reason) => return Reply::Close(reason),
        }
    };
    finish(shared, &info, body, version, None)
}

/// SaslHandshake: the mechanism, if enabled, starts an exchange (v0: of
/// bare tokens); the answer lists the enabled mechanisms. Out of turn
/// (without SASL, or once authenticated) it is ILLEGAL_SASL_STATE with no
/// mechanisms, as Kafka's request handler answers it.
fn handshake(
    shared: &Shared,
    mechanism: &str,
    version: i16,
    auth: &mut Auth,
) -> ResponseBody<'static> {
    let mechanisms: Vec<std::borrow::Cow<'static, str>> = shared
        .credentials
        .mechanism_names()
        .into_iter()
        .map(Into::into)
        .collect();
    let error_code = if !matches!(auth, Auth::Handshake) {
        return ResponseBody::SaslHandshake(SaslHandshakeResponse {
            error_code: ErrorCode::IllegalSaslState.code(),
            mechanisms: Vec::new(),
        });
    } else if let Some(m) = shared.credentials.enabled(mechanism) {
        *auth = if version == 0 {
            Auth::Legacy(sasl::start(m))
        } else {
            Auth::Tokens(sasl::start(m))
        };
        0
    } else {
        ErrorCode::UnsupportedSaslMechanism.code()
    };
    ResponseBody::SaslHandshake(SaslHandshakeResponse {
        error_code,
        mechanisms,
    })
}

/// SaslAuthenticate: one token of the exchange; a failure is answered,
/// then the connection closed (the reason given).
fn authenticate(
    shared: &Shared,
    token: &[u8],
    auth: &mut Auth,
) -> (ResponseBody<'static>, Option<String>) {
    let answer = |error_code: i16, message: Option<String>, bytes: Vec<u8>| {
        ResponseBody::SaslAuthenticate(SaslAuthenticateResponse {
            error_code,
            error_message: message.map(Into::into),
            auth_bytes: bytes.into(),
            ..Default::default()
        })
    };
    let Auth::Tokens(exchange) = &*auth else {
        let why = "SaslAuthenticate before SaslHandshake".to_owned();
        return (
            answer(
                ErrorCode::IllegalSaslState.code(),
                Some(why.clone()),
                Vec::new(),
            ),
            Some(why),
        );
    };
    match sasl::step(&shared.credentials, exchange, token) {
        Step::Continue(challenge, next) => {
            *auth = Auth::Tokens(next);
            (answer(0, None, challenge), None)
        }
        Step::Done(last, user) => {
            *auth = Auth::Open(Some(user));
            (answer(0, None, last), None)
        }
        Step::Failed(why) => (
            answer(
                ErrorCode::SaslAuthenticationFailed.code(),
                Some(why.clone()),
                Vec::new(),
            ),
            Some(why),
        ),
    }
}

/// Encodes a response, records it when capturing, and closes after it
/// when `close_after` gives a reason.
fn finish(
    shared: &Shared,
    info: &FrameInfo<'_>,
    body: ResponseBody<'static>,
    version: i16,
    close_after: Option<String>,
) -> Reply {
    let api = body.api_key();
    let info = *info;
    let response = ResponseFrame {
        header: ResponseHeader {
            correlation_id: info.correlation_id,
            ..Default::default()
        },
        body,
        version,
    };
    let size = response.encoded_len();
    if size > MAX_RESPONSE_SIZE {
        return Reply::Close(format!(
            "the {} response would take {size} bytes, more than {MAX_RESPONSE_SIZE}",
            api.name()
        ));
    }
    let mut bytes = Vec::with_capacity(size);
    if let Err(e) = response.encode(&mut bytes) {
        return Reply::Close(format!("cannot encode the {} response: {e}", api.name()));
    }
    if let Some(capture) = &shared.capture {
        let info = FrameInfo {
            api_version: version,
            ..info
        };
        capture.record(Direction::Response, &info, &bytes);
    }
    match close_after {
        Some(reason) => Reply::FrameThenClose(bytes, reason),
        None => Reply::Frame(bytes),
    }
}
