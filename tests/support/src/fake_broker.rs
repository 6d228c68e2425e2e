//! A fake broker on 127.0.0.1: a thread that accepts connections and a
//! thread per connection, answering the requests a test chooses and no
//! others. It lives as long as the test process.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::ResponseHeader;
use kafka_wire::ResponseBody;

use crate::frames::receive;

/// What the fake broker does with one request.
#[derive(Debug)]
pub enum Reply {
    /// Answers with this body at the request's version.
    Answer(ResponseBody<'static>),
    /// Answers with this body at the given version (an ApiVersions answer
    /// to a version the broker lacks is written at version 0).
    AnswerAt(ResponseBody<'static>, i16),
    /// Writes these bytes as they are: a hand-built, perhaps broken, frame.
    Bytes(Vec<u8>),
    /// Sends nothing, and reads the next request.
    Nothing,
    /// Closes the connection.
    Close,
}

/// Starts a fake broker that hands each accepted connection, with the
/// broker's own address, to `serve` on a thread of its own. For brokers
/// that speak more than requests (bare SASL tokens); others use
/// [`fake_broker`].
pub fn fake_listener<F>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream, SocketAddr) + Send + Sync + 'static,
{
    let listener =
        TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("binding 127.0.0.1:0: {e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("the fake broker's address: {e}"));
    let serve = Arc::new(serve);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let serve = Arc::clone(&serve);
            thread::spawn(move || serve(stream, address));
        }
    });
    address
}

/// Starts a fake broker that reads request frames and does with each what
/// `answer` says, given the request and the broker's own address (for
/// answers that advertise it). A frame that is not a request panics the
/// connection's thread, which closes the connection.
pub fn fake_broker<F>(answer: F) -> SocketAddr
where
    F: Fn(&RequestFrame<'_>, SocketAddr) -> Reply + Send + Sync + 'static,
{
    fake_listener(move |mut stream, address| {
        while let Some(frame) = receive(&mut stream) {
            let request = RequestFrame::decode(&frame)
                .unwrap_or_else(|e| panic!("the fake broker got no request: {e}"));
            let sent = match answer(&request, address) {
                Reply::Answer(body) => respond(&mut stream, &request, body, request.api_version()),
                Reply::AnswerAt(body, version) => respond(&mut stream, &request, body, version),
                Reply::Bytes(bytes) => stream.write_all(&bytes).is_ok(),
                Reply::Nothing => true,
                Reply::Close => false,
            };
            if !sent {
                return;
            }
        }
    })
}

/// Writes the answer to `request`: `body` at `version`, under a header with
/// the request's correlation id. `false` when the write fails (the client
/// has gone). Panics when the body does not encode at `version`.
pub fn respond(
    stream: &mut impl Write,
    request: &RequestFrame<'_>,
    body: ResponseBody<'_>,
    version: i16,
) -> bool {
    let response = ResponseFrame {
        header: ResponseHeader {
            correlation_id: request.header.correlation_id,
            ..Default::default()
        },
        body,
        version,
    };
    let mut bytes = Vec::new();
    response.encode_with_size(&mut bytes).unwrap_or_else(|e| {
        panic!(
            "the {} v{version} answer does not encode: {e}",
            request.api_key().name()
        )
    });
    stream.write_all(&bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{receive, send_request};
    use kafka_wire::messages::{ApiVersionsRequest, ApiVersionsResponse};
    use kafka_wire::ApiKey;

    #[test]
    fn answers_what_it_is_told_and_closes_when_told() {
        let address = fake_broker(|request, _| match request.api_version() {
            3 => Reply::Answer(ApiVersionsResponse::default().into()),
            2 => Reply::Nothing,
            _ => Reply::Close,
        });
        let mut stream = TcpStream::connect(address).unwrap();
        send_request(&mut stream, 2, 1, "t", ApiVersionsRequest::default().into());
        send_request(&mut stream, 3, 2, "t", ApiVersionsRequest::default().into());
        let frame = receive(&mut stream).unwrap();
        let response = ResponseFrame::decode(&frame, ApiKey::ApiVersions, 3).unwrap();
        assert_eq!(response.header.correlation_id, 2);
        send_request(&mut stream, 1, 3, "t", ApiVersionsRequest::default().into());
        assert_eq!(receive(&mut stream), None);
    }
}
