//! One client connection: read a frame, answer it, repeat. Requests are
//! answered one at a time and in order, as Kafka does.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use kafka_wire::api_versions::unsupported_api_versions_reply;
use kafka_wire::frame::FrameCodec;
use kafka_wire::frame::{peek_request, RequestFrame, ResponseFrame};
use kafka_wire::messages::ResponseHeader;
use kafka_wire::{ApiKey, ResponseBody};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

use crate::broker::Broker;
use crate::capture::{ConnectionCapture, Direction, FrameInfo};
use crate::handlers;

/// What to do after a request.
enum Reply {
    /// Send this frame (without size prefix).
    Frame(Vec<u8>),
    /// Send nothing (a Produce with acks=0).
    Nothing,
    /// Close the connection, for this reason.
    Close(String),
}

/// Serves one connection until the client closes it or sends something
/// that cannot be answered.
pub async fn serve(broker: Arc<Broker>, stream: TcpStream, peer: SocketAddr, id: u64) {
    let mut capture = match broker.capture.as_ref().map(|c| c.connection(id)) {
        Some(Err(e)) => {
            eprintln!("connection {id}: cannot open capture file: {e}");
            None
        }
        Some(Ok(capture)) => Some(capture),
        None => None,
    };
    let mut frames = Framed::new(stream, FrameCodec::default());
    loop {
        // A complete frame must arrive within the idle timeout, so that
        // neither a silent client nor one that stops half way through a
        // frame holds its connection and buffer forever.
        let next = tokio::time::timeout(broker.config.idle_timeout, frames.next()).await;
        let frame = match next {
            Err(_) => {
                eprintln!(
                    "connection {id} ({peer}): closing: no complete frame in {:?}",
                    broker.config.idle_timeout
                );
                break;
            }
            Ok(None) => break,
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(e))) => {
                eprintln!("connection {id} ({peer}): {e}");
                break;
            }
        };
        match answer(&broker, &frame, capture.as_mut()).await {
            Reply::Frame(response) => {
                if let Err(e) = frames.send(response).await {
                    eprintln!("connection {id} ({peer}): {e}");
                    break;
                }
            }
            Reply::Nothing => {}
            Reply::Close(reason) => {
                eprintln!("connection {id} ({peer}): closing: {reason}");
                break;
            }
        }
    }
}

/// Decodes one request frame, lets the handlers answer it, and encodes the
/// response, recording both when capturing.
async fn answer(
    broker: &Broker,
    frame: &[u8],
    mut capture: Option<&mut ConnectionCapture>,
) -> Reply {
    let peek = match peek_request(frame) {
        Ok(peek) => peek,
        Err(e) => return Reply::Close(format!("unreadable request header: {e}")),
    };
    let decoded = RequestFrame::decode(frame);
    let client_id = decoded
        .as_ref()
        .ok()
        .and_then(|request| request.header.client_id.as_deref());
    let info = FrameInfo {
        api_key: peek.api_key,
        api_version: peek.api_version,
        correlation_id: peek.correlation_id,
        client_id,
    };
    if let Some(capture) = capture.as_deref_mut() {
        capture.record(Direction::Request, &info, frame);
    }
    let Some(api) = peek.api() else {
        return Reply::Close(format!("unknown api key {}", peek.api_key));
    };

    let (body, version) = if !api.supports_version(peek.api_version) {
        if api != ApiKey::ApiVersions {
            // No response body exists at this version: Kafka closes too.
            return Reply::Close(format!(
                "{} v{} is not supported",
                api.name(),
                peek.api_version
            ));
        }
        // The client retries with a version from this v0 reply.
        (
            ResponseBody::ApiVersions(unsupported_api_versions_reply()),
            0,
        )
    } else {
        let request = match &decoded {
            Ok(request) => request,
            Err(e) => return Reply::Close(format!("undecodable {} request: {e}", api.name())),
        };
        match handlers::handle(broker, request).await {
            Some(body) => (body, peek.api_version),
            None => return Reply::Nothing,
        }
    };

    let response = ResponseFrame {
        header: ResponseHeader {
            correlation_id: peek.correlation_id,
            ..Default::default()
        },
        body,
        version,
    };
    // Sized before anything is allocated: a response past the limit (which
    // Fetch's size limits should make impossible) closes the connection.
    let size = response.encoded_len();
    if size > broker.config.max_response_size {
        return Reply::Close(format!(
            "the {} response would take {size} bytes, more than {}",
            api.name(),
            broker.config.max_response_size
        ));
    }
    let mut bytes = Vec::with_capacity(size);
    if let Err(e) = response.encode(&mut bytes) {
        return Reply::Close(format!("cannot encode the {} response: {e}", api.name()));
    }
    if let Some(capture) = capture {
        // Recorded with the version it was encoded at (v0 for the
        // unsupported-ApiVersions reply).
        let info = FrameInfo {
            api_version: version,
            ..info
        };
        capture.record(Direction::Response, &info, &bytes);
    }
    Reply::Frame(bytes)
}
