//! Frames over a blocking stream, for tests that play a client or a
//! broker over a `TcpStream`: a request written with its header and size
//! prefix, and frames read through kafka-wire's own
//! [`read_frame`], so that no test parses a
//! size prefix by hand.

use std::io::{Read, Write};

use kafka_wire::frame::{
    read_frame, ReadFrameError, RequestFrame, ResponseFrame, DEFAULT_MAX_FRAME_SIZE,
};
use kafka_wire::messages::{RequestHeader, ResponseHeader};
use kafka_wire::{RequestBody, ResponseBody};

/// The next frame from `stream`, without its size prefix, read with
/// kafka-wire's [`read_frame`] and its default maximum.
///
/// `None` when the stream ends, fails or times out instead (the peer
/// closed the connection, or did not answer within the stream's read
/// timeout). A size prefix that kafka-wire refuses (negative, or above the
/// maximum) is a fault of the peer under test, and panics.
pub fn receive(stream: &mut impl Read) -> Option<Vec<u8>> {
    match read_frame(stream, DEFAULT_MAX_FRAME_SIZE) {
        Ok(frame) => frame,
        Err(ReadFrameError::Size(error)) => panic!("the peer sent a bad size prefix: {error}"),
        Err(ReadFrameError::Io(_) | ReadFrameError::Truncated { .. }) => None,
    }
}

/// `body` as a request frame at `version`, with its size prefix: a header
/// naming the body's api, `version`, `correlation_id` and `client_id`.
///
/// Panics when the body does not encode at `version`.
pub fn request_bytes(
    version: i16,
    correlation_id: i32,
    client_id: &str,
    body: RequestBody<'_>,
) -> Vec<u8> {
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: body.api_key().key(),
            request_api_version: version,
            correlation_id,
            client_id: Some(client_id.into()),
            ..Default::default()
        },
        body,
    };
    let mut bytes = Vec::new();
    frame
        .encode_with_size(&mut bytes)
        .unwrap_or_else(|e| panic!("{} v{version} does not encode: {e}", frame.api_key().name()));
    bytes
}

/// `body` as a response frame at `version` (the version its body is
/// written at), answering `correlation_id`, with its size prefix.
///
/// Panics when the body does not encode at `version`.
pub fn response_bytes(version: i16, correlation_id: i32, body: ResponseBody<'_>) -> Vec<u8> {
    let frame = ResponseFrame {
        header: ResponseHeader {
            correlation_id,
            ..Default::default()
        },
        body,
        version,
    };
    let mut bytes = Vec::new();
    frame.encode_with_size(&mut bytes).unwrap_or_else(|e| {
        panic!(
            "{} v{version} does not encode: {e}",
            frame.body.api_key().name()
        )
    });
    bytes
}

/// Writes [`request_bytes`] to `stream`, panicking when the write fails.
pub fn send_request(
    stream: &mut impl Write,
    version: i16,
    correlation_id: i32,
    client_id: &str,
    body: RequestBody<'_>,
) {
    let bytes = request_bytes(version, correlation_id, client_id, body);
    stream
        .write_all(&bytes)
        .unwrap_or_else(|e| panic!("sending a request: {e}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_wire::messages::ApiVersionsRequest;

    #[test]
    fn a_request_written_is_read_back_whole() {
        let mut bytes = request_bytes(3, 7, "client", ApiVersionsRequest::default().into());
        bytes.extend(request_bytes(
            0,
            8,
            "client",
            ApiVersionsRequest::default().into(),
        ));
        let mut input = &bytes[..];
        let first = receive(&mut input).unwrap();
        let request = RequestFrame::decode(&first).unwrap();
        assert_eq!(
            (request.api_version(), request.header.correlation_id),
            (3, 7)
        );
        let second = receive(&mut input).unwrap();
        assert_eq!(
            RequestFrame::decode(&second).unwrap().header.correlation_id,
            8
        );
        assert_eq!(receive(&mut input), None);
        // Cut short: the end of the stream, not a frame.
        assert_eq!(receive(&mut &bytes[..6]), None);
    }

    #[test]
    #[should_panic(expected = "bad size prefix")]
    fn a_negative_size_panics() {
        receive(&mut &(-1i32).to_be_bytes()[..]);
    }
}
