//! Whole request and response frames: a header and a body, with the header
//! version derived from the api key and version as Kafka derives it.
//!
//! On the wire a frame is an int32 size, the header, then the body. The
//! functions here work on the frame *without* its size prefix, as a stream
//! codec hands it over; [`RequestFrame::encode_with_size`] and
//! [`ResponseFrame::encode_with_size`] add it.

use crate::messages::{RequestHeader, ResponseHeader};
use crate::runtime::{
    DecodeError, DecodeErrorKind, Encode, EncodeBuf, EncodeError, EncodeErrorKind, Message, Reader,
    Writer,
};
use crate::{ApiKey, RequestBody, ResponseBody};

/// The fields every request header starts with, read without decoding the
/// rest of the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPeek {
    /// The api key, as sent; it may be one this crate does not know.
    pub api_key: i16,
    /// The api version, as sent.
    pub api_version: i16,
    /// The correlation id the response must echo.
    pub correlation_id: i32,
}

impl RequestPeek {
    /// The api, when this crate knows the key.
    pub fn api(&self) -> Option<ApiKey> {
        ApiKey::from_key(self.api_key)
    }
}

/// Reads the api key, version and correlation id at the front of a request
/// frame (without size prefix), decoding nothing else.
pub fn peek_request(frame: &[u8]) -> Result<RequestPeek, DecodeError> {
    let mut reader = Reader::new(frame);
    let api_key = reader
        .read_i16()
        .map_err(|e| e.in_field("request_api_key"))?;
    let api_version = reader
        .read_i16()
        .map_err(|e| e.in_field("request_api_version"))?;
    let correlation_id = reader
        .read_i32()
        .map_err(|e| e.in_field("correlation_id"))?;
    Ok(RequestPeek {
        api_key,
        api_version,
        correlation_id,
    })
}

/// A decoded request: its header and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFrame<'a> {
    /// The header, whose api key and version select the body.
    pub header: RequestHeader<'a>,
    /// The body.
    pub body: RequestBody<'a>,
}

impl<'a> RequestFrame<'a> {
    /// Decodes a request frame without its size prefix. Every byte must be
    /// consumed.
    pub fn decode(frame: &'a [u8]) -> Result<Self, DecodeError> {
        let peek = peek_request(frame)?;
        let api = peek.api().ok_or_else(|| {
            DecodeError::new(0, DecodeErrorKind::UnknownApiKey(peek.api_key))
                .in_field("request_api_key")
        })?;
        let mut reader = Reader::new(frame);
        let header_version = api.request_header_version(peek.api_version);
        let header = RequestHeader::decode_prefix(&mut reader, header_version)?;
        let body_start = reader.offset();
        let body = RequestBody::decode(reader.rest(), api, peek.api_version)
            .map_err(|e| e.shifted(body_start))?;
        Ok(RequestFrame { header, body })
    }

    /// The api of this request.
    pub fn api_key(&self) -> ApiKey {
        self.body.api_key()
    }

    /// The api version, from the header.
    pub fn api_version(&self) -> i16 {
        self.header.request_api_version
    }

    /// The header version this request uses.
    pub fn header_version(&self) -> i16 {
        self.api_key().request_header_version(self.api_version())
    }

    /// The exact size of the frame without its size prefix.
    pub fn encoded_len(&self) -> usize {
        self.header.encoded_len(self.header_version()) + self.body.encoded_len(self.api_version())
    }

    /// Encodes the header and body, without a size prefix.
    ///
    /// Fails with [`EncodeErrorKind::ApiKeyMismatch`], writing nothing, when
    /// the header's api key is not the body's: a peer would decode the body
    /// as another api's.
    pub fn encode<B: EncodeBuf + ?Sized>(&self, buf: &mut B) -> Result<(), EncodeError> {
        self.check_api_key()?;
        let mut writer = buf.writer();
        writer.reserve(self.encoded_len());
        self.encode_parts(&mut writer)
    }

    /// Writes the header and the body into room the caller has made.
    fn encode_parts(&self, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.header
            .encode_to_writer(writer, self.header_version())?;
        self.body.encode_to_writer(writer, self.api_version())
    }

    fn check_api_key(&self) -> Result<(), EncodeError> {
        let body = self.body.api_key().key();
        if self.header.request_api_key == body {
            return Ok(());
        }
        Err(EncodeError::new(EncodeErrorKind::ApiKeyMismatch {
            header: self.header.request_api_key,
            body,
        })
        .in_field("request_api_key"))
    }

    /// Copies what still borrows from the input, so that the frame can
    /// outlive it (be kept, or sent to another thread).
    pub fn into_owned(self) -> RequestFrame<'static> {
        RequestFrame {
            header: self.header.into_owned(),
            body: self.body.into_owned(),
        }
    }

    /// Encodes the frame with its int32 size prefix, as it goes on the wire.
    pub fn encode_with_size<B: EncodeBuf + ?Sized>(&self, buf: &mut B) -> Result<(), EncodeError> {
        self.check_api_key()?;
        let len = self.encoded_len();
        let size = frame_size(len)?;
        let mut writer = buf.writer();
        writer.reserve(4 + len);
        writer.put_i32(size);
        self.encode_parts(&mut writer)
    }
}

/// A decoded response: its header and its body. A response does not say
/// which api it answers, so decoding needs the request's api key and version.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFrame<'a> {
    /// The header.
    pub header: ResponseHeader<'a>,
    /// The body.
    pub body: ResponseBody<'a>,
}

impl<'a> ResponseFrame<'a> {
    /// Decodes a response frame, without its size prefix, to a request of
    /// `api` at `version`.
    pub fn decode(frame: &'a [u8], api: ApiKey, version: i16) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(frame);
        let header =
            ResponseHeader::decode_prefix(&mut reader, api.response_header_version(version))?;
        let body_start = reader.offset();
        let body =
            ResponseBody::decode(reader.rest(), api, version).map_err(|e| e.shifted(body_start))?;
        Ok(ResponseFrame { header, body })
    }

    /// The exact size of the frame at `version`, without its size prefix.
    pub fn encoded_len(&self, version: i16) -> usize {
        let header_version = self.body.api_key().response_header_version(version);
        self.header.encoded_len(header_version) + self.body.encoded_len(version)
    }

    /// Encodes the header and body at `version`, without a size prefix.
    pub fn encode<B: EncodeBuf + ?Sized>(
        &self,
        buf: &mut B,
        version: i16,
    ) -> Result<(), EncodeError> {
        let mut writer = buf.writer();
        writer.reserve(self.encoded_len(version));
        self.encode_parts(&mut writer, version)
    }

    /// Encodes the frame with its int32 size prefix.
    pub fn encode_with_size<B: EncodeBuf + ?Sized>(
        &self,
        buf: &mut B,
        version: i16,
    ) -> Result<(), EncodeError> {
        let len = self.encoded_len(version);
        let size = frame_size(len)?;
        let mut writer = buf.writer();
        writer.reserve(4 + len);
        writer.put_i32(size);
        self.encode_parts(&mut writer, version)
    }

    /// Writes the header and the body at `version` into room the caller has
    /// made.
    fn encode_parts(&self, writer: &mut Writer<'_>, version: i16) -> Result<(), EncodeError> {
        let header_version = self.body.api_key().response_header_version(version);
        self.header.encode_to_writer(writer, header_version)?;
        self.body.encode_to_writer(writer, version)
    }

    /// Copies what still borrows from the input, so that the frame can
    /// outlive it (be kept, or sent to another thread).
    pub fn into_owned(self) -> ResponseFrame<'static> {
        ResponseFrame {
            header: self.header.into_owned(),
            body: self.body.into_owned(),
        }
    }
}

fn frame_size(len: usize) -> Result<i32, EncodeError> {
    i32::try_from(len).map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))
}

/// Splits a stream of size-prefixed frames, such as a capture, into frames.
///
/// Yields each frame without its prefix. A negative size, or a size that
/// runs past the end of the input, ends the iteration with an error naming
/// the byte offset of the prefix.
pub fn split_frames(stream: &[u8]) -> SplitFrames<'_> {
    SplitFrames {
        stream,
        position: 0,
        failed: false,
    }
}

/// The iterator returned by [`split_frames`].
#[derive(Debug, Clone)]
pub struct SplitFrames<'a> {
    stream: &'a [u8],
    position: usize,
    failed: bool,
}

impl<'a> SplitFrames<'a> {
    /// The offset of the next frame's size prefix.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl<'a> Iterator for SplitFrames<'a> {
    type Item = Result<(usize, &'a [u8]), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.position >= self.stream.len() {
            return None;
        }
        let start = self.position;
        let mut reader = Reader::new(&self.stream[start..]);
        let result = reader
            .read_i32()
            .and_then(|size| {
                usize::try_from(size)
                    .map_err(|_| DecodeError::new(0, DecodeErrorKind::InvalidLength(size.into())))
            })
            .and_then(|size| {
                let offset = reader.offset();
                if size > reader.remaining() {
                    Err(DecodeError::new(
                        offset,
                        DecodeErrorKind::LengthExceedsInput {
                            length: size as u64,
                            remaining: reader.remaining(),
                        },
                    ))
                } else {
                    reader.take(size)
                }
            });
        match result {
            Ok(frame) => {
                self.position = start + 4 + frame.len();
                Some(Ok((start + 4, frame)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(start)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{api_versions_response, ApiVersionsRequest, ApiVersionsResponse};
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
        };
        let mut buf = Vec::new();
        assert!(response.encode(&mut buf, 3).is_ok());
        // Correlation id, then the body: no tagged-field byte after the header.
        assert_eq!(&buf[..6], b"\x00\x00\x00\x00\x00\x00");
        let decoded = ResponseFrame::decode(&buf, ApiKey::ApiVersions, 3);
        assert_eq!(decoded.ok(), Some(response));
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
