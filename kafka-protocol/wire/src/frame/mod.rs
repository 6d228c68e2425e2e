//! Kafka's frames: an int32 size, a header, then a body.
//!
//! - Splitting a stream into frames ([`FrameSplitter`] and [`next_frame`]
//!   for bytes pushed as they come, [`read_frame`] over a blocking
//!   `std::io::Read`, with the `tokio` feature [`FrameCodec`], and
//!   [`split_frames`] for a capture held in memory) has one size-prefix
//!   parser, one maximum ([`DEFAULT_MAX_FRAME_SIZE`]) and one read-ahead
//!   policy: a size prefix is a claim, and nothing reserves room for a whole
//!   frame when only its prefix has arrived.
//! - [`RequestParts`] and [`ResponseParts`] hold the one rule for what is in
//!   a frame: the header, read once, then the body at the api and version
//!   the header (or the request) gives, with errors located in the frame.
//!   A request is read strictly, every byte used, or on request as Kafka's
//!   broker reads it ([`RequestParts::decode_body_lenient`],
//!   [`RequestFrame::decode_lenient`]): bytes after the body ignored and
//!   counted ([`Lenient`]).
//! - [`RequestFrame`] and [`ResponseFrame`] decode through them and encode
//!   a header and body, with the header version derived from the api key
//!   and version as Kafka derives it. They work on a frame *without* its
//!   size prefix, as a splitter hands it over; `encode_with_size` adds it.
//! - [`expects_response`] and [`response_body_version`] state the rules of
//!   an exchange that no header carries: a Produce with `acks = 0` gets no
//!   answer, and an ApiVersions answer to an unsupported version is
//!   written at version 0.

#[cfg(feature = "tokio")]
mod codec;
#[cfg(kafka_apis)]
mod exchange;
#[cfg(kafka_apis)]
mod parts;
mod read;
#[cfg(kafka_apis)]
mod request;
#[cfg(kafka_apis)]
mod response;
mod split;

#[cfg(feature = "tokio")]
pub use codec::{FrameCodec, FrameCodecError};
#[cfg(kafka_apis)]
pub use exchange::{expects_response, produce_acks, request_header_len, response_body_version};
#[cfg(kafka_apis)]
pub use parts::{Lenient, RequestParts, ResponseParts};
pub use read::{read_frame, ReadFrameError};
#[cfg(kafka_apis)]
pub use request::{peek_request, RequestFrame, RequestPeek};
#[cfg(kafka_apis)]
pub use response::ResponseFrame;
pub use split::{
    frame_size, next_frame, split_frames, FrameError, FrameSplitter, SplitFrames,
    DEFAULT_MAX_FRAME_SIZE, READ_AHEAD,
};

#[cfg(kafka_apis)]
use crate::runtime::{EncodeError, EncodeErrorKind};

/// The size prefix of a frame of `len` bytes.
#[cfg(kafka_apis)]
fn size_prefix(len: usize) -> Result<i32, EncodeError> {
    i32::try_from(len).map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))
}

#[cfg(all(test, feature = "api-versions"))]
mod tests {
    use super::*;
    use crate::messages::RequestHeader;
    use crate::messages::{api_versions_response, ApiVersionsRequest, ApiVersionsResponse};
    use crate::runtime::DecodeErrorKind;
    use crate::{ApiKey, RequestBody, ResponseBody};
    use std::borrow::Cow;

    fn api_versions_request_frame(version: i16) -> Vec<u8> {
        let frame = RequestFrame {
            header: RequestHeader {
                request_api_key: ApiKey::ApiVersions.key(),
                request_api_version: version,
                correlation_id: 7,
                client_id: Some(Cow::Borrowed("client")),
                ..Default::default()
            },
            body: RequestBody::ApiVersions(ApiVersionsRequest {
                client_software_name: "kafka-wire".into(),
                client_software_version: "0.1".into(),
                ..Default::default()
            }),
        };
        let mut buf = Vec::new();
        assert!(frame.encode(&mut buf).is_ok());
        assert_eq!(buf.len(), frame.encoded_len());
        buf
    }

    #[test]
    fn request_frames_round_trip_with_the_right_header_version() {
        for version in [0, 3, 4] {
            let bytes = api_versions_request_frame(version);
            let frame = RequestFrame::decode(&bytes).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(frame.header.correlation_id, 7);
            assert_eq!(frame.header_version(), if version >= 3 { 2 } else { 1 });
            let mut again = Vec::new();
            assert!(frame.encode(&mut again).is_ok());
            assert_eq!(again, bytes);
        }
        // Header v1: key, version, correlation id, int16-length client id.
        let v0 = api_versions_request_frame(0);
        assert_eq!(&v0[..16], b"\x00\x12\x00\x00\x00\x00\x00\x07\x00\x06client");
        // Header v2 still writes the client id with an int16 length, then tags.
        let v3 = api_versions_request_frame(3);
        assert_eq!(
            &v3[..17],
            b"\x00\x12\x00\x03\x00\x00\x00\x07\x00\x06client\x00"
        );
    }

    #[test]
    fn api_versions_responses_always_use_header_v0() {
        let response = ResponseFrame {
            header: Default::default(),
            body: ResponseBody::ApiVersions(ApiVersionsResponse {
                api_keys: vec![api_versions_response::ApiVersion {
                    api_key: 18,
                    min_version: 0,
                    max_version: 4,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }),
            version: 3,
        };
        let mut buf = Vec::new();
        assert!(response.encode(&mut buf).is_ok());
        // Correlation id, then the body: no tagged-field byte after the header.
        assert_eq!(&buf[..6], b"\x00\x00\x00\x00\x00\x00");
        let decoded = ResponseFrame::decode(&buf, ApiKey::ApiVersions, 3);
        assert_eq!(decoded.ok(), Some(response.clone()));
        let without_heap = ResponseFrame::decode_without_heap(&buf, ApiKey::ApiVersions, 3);
        assert_eq!(without_heap.ok(), Some(response));
    }

    #[test]
    fn peeking_and_hostile_frames() {
        let bytes = api_versions_request_frame(3);
        let peek = peek_request(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(peek.api(), Some(ApiKey::ApiVersions));
        assert_eq!((peek.api_version, peek.correlation_id), (3, 7));
        assert!(peek_request(&[0]).is_err());
        assert!(RequestFrame::decode(&[0]).is_err());
        let unknown = RequestFrame::decode(&[0x7f, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(unknown.kind(), &DecodeErrorKind::UnknownApiKey(0x7f00));
        let mut trailing = bytes.clone();
        trailing.push(0);
        let error = RequestFrame::decode(&trailing).unwrap_err();
        assert_eq!(error.kind(), &DecodeErrorKind::TrailingBytes(1));
        assert_eq!(error.offset(), bytes.len());
        // Without heap, the same frame and the same error, at the same
        // offset in the frame.
        assert_eq!(
            RequestFrame::decode_without_heap(&bytes).ok(),
            RequestFrame::decode(&bytes).ok()
        );
        assert_eq!(
            RequestFrame::decode_without_heap(&trailing).err(),
            Some(error)
        );
        // Read as Kafka's broker reads it, the byte after the body is
        // ignored and counted; the strict read still refuses it.
        let lenient = RequestFrame::decode_lenient(&trailing).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lenient.trailing_bytes, 1);
        assert_eq!(Some(lenient.value), RequestFrame::decode(&bytes).ok());
        let parts = RequestParts::split(&trailing).unwrap_or_else(|e| panic!("{e}"));
        let without_heap = parts
            .decode_body_lenient_without_heap()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(without_heap.trailing_bytes, 1);
        let exact = RequestFrame::decode_lenient(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exact.trailing_bytes, 0);
        // Other errors stay errors.
        assert!(RequestFrame::decode_lenient(&bytes[..bytes.len() - 1]).is_err());
        // An error inside the body names its offset in the frame: the
        // client software name's length claims a byte past the end.
        let mut cut = bytes.clone();
        let name_at = 17;
        cut.truncate(name_at + 3);
        let error = RequestFrame::decode(&cut).unwrap_err();
        assert_eq!(error.offset(), name_at + 1);
        assert_eq!(RequestFrame::decode_without_heap(&cut).err(), Some(error));
    }

    #[test]
    fn splitting_a_stream() {
        let frame = api_versions_request_frame(3);
        let mut stream = Vec::new();
        for _ in 0..2 {
            stream.extend_from_slice(&(frame.len() as i32).to_be_bytes());
            stream.extend_from_slice(&frame);
        }
        stream.extend_from_slice(&[0, 0, 0, 9, 1]);
        let results: Vec<_> = split_frames(&stream).collect();
        assert_eq!(results.len(), 3);
        assert!(results[..2]
            .iter()
            .all(|r| r.as_ref().is_ok_and(|(_, f)| *f == frame)));
        let error = results[2].as_ref().unwrap_err();
        assert_eq!(error.offset(), 2 * (4 + frame.len()) + 4);
    }
}
