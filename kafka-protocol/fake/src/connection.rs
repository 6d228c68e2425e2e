//! One client connection: requests are read and answered one at a time, in
//! order, as Kafka's broker does (it reads the next request once the
//! previous one is answered). A client may pipeline: requests it sends
//! ahead wait in the socket and are answered in the order sent.
//!
//! Limits: a frame larger than `max_request_size` closes the connection
//! before its body is read, and so does a connection that sends no
//! complete frame within the idle timeout.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use kafka_wire::api_versions::unsupported_api_versions_reply;
use kafka_wire::frame::{peek_request, FrameCodec, RequestFrame, ResponseFrame};
use kafka_wire::messages::ResponseHeader;
use kafka_wire::{ApiKey, ResponseBody};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

use crate::capture::{Direction, FrameInfo};
use crate::dispatch::{self, Context, Outcome};
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
        match answer(&shared, node_id, &host, id, &frame).await {
            Reply::Frame(response) => {
                if let Err(e) = frames.send(response).await {
                    eprintln!("broker {node_id}: connection {id} ({peer}): {e}");
                    break;
                }
            }
            Reply::Nothing => {}
            Reply::Close(reason) => {
                eprintln!("broker {node_id}: connection {id} ({peer}): closing: {reason}");
                break;
            }
        }
    }
}

/// Decodes one request frame, has it dispatched, and encodes the answer,
/// recording both when capturing.
async fn answer(
    shared: &Arc<Shared>,
    node_id: i32,
    host: &str,
    connection: u64,
    frame: &[u8],
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
    let (body, version) =
        if api == ApiKey::ApiVersions && !versions::serves(api, peek.api_version, caps) {
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
            let context = Context {
                shared,
                node_id,
                version: peek.api_version,
                client_id: client_id.unwrap_or(""),
                client_host: host,
                connection,
            };
            match dispatch::dispatch(&context, &request.body).await {
                Outcome::Respond(body) => (*body, peek.api_version),
                Outcome::NoResponse => return Reply::Nothing,
                Outcome::Close(reason) => return Reply::Close(reason),
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
    Reply::Frame(bytes)
}
