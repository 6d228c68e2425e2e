//! Request frames: a request header and the body its api key and version
//! select.

use crate::messages::RequestHeader;
use crate::runtime::{
    DecodeError, Encode, EncodeBuf, EncodeError, EncodeErrorKind, IntoOwned, Message, Reader,
    Writer,
};
use crate::{ApiKey, RequestBody};

use super::{size_prefix, Lenient, RequestParts};

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
    /// consumed. The header and body are read as [`RequestParts`] reads them.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode(frame: &'a [u8]) -> Result<Self, DecodeError> {
        let parts = RequestParts::split(frame)?;
        let body = parts.decode_body()?;
        Ok(Self::from_parts(parts, body))
    }

    /// Decodes a request frame as [`RequestFrame::decode`] does, but
    /// allocates nothing (see [`RequestParts::decode_body_without_heap`]):
    /// for a frame read once, such as one printed.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_without_heap(frame: &'a [u8]) -> Result<Self, DecodeError> {
        let parts = RequestParts::split(frame)?;
        let body = parts.decode_body_without_heap()?;
        Ok(Self::from_parts(parts, body))
    }

    /// Decodes a request frame as Kafka's broker reads one: bytes after the
    /// body are ignored and counted (see
    /// [`RequestParts::decode_body_lenient`]). [`RequestFrame::decode`]
    /// refuses them.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_lenient(frame: &'a [u8]) -> Result<Lenient<Self>, DecodeError> {
        let parts = RequestParts::split(frame)?;
        let body = parts.decode_body_lenient()?;
        Ok(Lenient {
            trailing_bytes: body.trailing_bytes,
            value: Self::from_parts(parts, body.value),
        })
    }

    /// The frame of `parts`' header and its decoded `body`.
    fn from_parts(parts: RequestParts<'a>, body: RequestBody<'a>) -> Self {
        RequestFrame {
            header: parts.header,
            body,
        }
    }

    /// The api of this request.
    pub fn api_key(&self) -> ApiKey {
        self.body.api_key()
    }

    /// The api version, from the header.
    pub fn api_version(&self) -> i16 {
        self.header.request_api_version
    }

    /// Whether the receiver answers this request: every request but a
    /// Produce with `acks = 0` (see [`expects_response`](super::expects_response)).
    pub fn expects_response(&self) -> bool {
        match &self.body {
            #[cfg(feature = "produce")]
            RequestBody::Produce(produce) => produce.acks != 0,
            // Unreachable when Produce is the only API compiled.
            #[allow(unreachable_patterns)]
            _ => true,
        }
    }

    /// The header version this request uses.
    pub fn header_version(&self) -> i16 {
        self.api_key().request_header_version(self.api_version())
    }

    /// The exact size of the frame without its size prefix.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn encoded_len(&self) -> usize {
        self.encoded_len_at(self.header_version())
    }

    /// [`encoded_len`](Self::encoded_len), with the header version known.
    #[cfg_attr(not(feature = "precompile"), inline)]
    fn encoded_len_at(&self, header_version: i16) -> usize {
        self.header.encoded_len(header_version) + self.body.encoded_len(self.api_version())
    }

    /// Encodes the header and body, without a size prefix.
    ///
    /// Fails with [`EncodeErrorKind::ApiKeyMismatch`], writing nothing, when
    /// the header's api key is not the body's: a peer would decode the body
    /// as another api's.
    pub fn encode<B: EncodeBuf + ?Sized>(&self, buf: &mut B) -> Result<(), EncodeError> {
        let header_version = self.checked_header_version()?;
        let mut writer = buf.writer();
        writer.reserve(self.encoded_len_at(header_version));
        self.encode_parts(&mut writer, header_version)
    }

    /// Writes the header and the body into room the caller has made.
    #[cfg_attr(not(feature = "precompile"), inline)]
    fn encode_parts(
        &self,
        writer: &mut Writer<'_>,
        header_version: i16,
    ) -> Result<(), EncodeError> {
        self.header.encode_to_writer(writer, header_version)?;
        self.body.encode_to_writer(writer, self.api_version())
    }

    /// The header version to encode with, once the header's api key is
    /// checked against the body's (the body's key is looked up once, for
    /// both).
    fn checked_header_version(&self) -> Result<i16, EncodeError> {
        let api = self.body.api_key();
        if self.header.request_api_key == api.key() {
            return Ok(api.request_header_version(self.api_version()));
        }
        Err(EncodeError::new(EncodeErrorKind::ApiKeyMismatch {
            header: self.header.request_api_key,
            body: api.key(),
        })
        .in_field("request_api_key"))
    }

    /// Encodes the frame with its int32 size prefix, as it goes on the wire.
    pub fn encode_with_size<B: EncodeBuf + ?Sized>(&self, buf: &mut B) -> Result<(), EncodeError> {
        let header_version = self.checked_header_version()?;
        let len = self.encoded_len_at(header_version);
        let size = size_prefix(len)?;
        let mut writer = buf.writer();
        writer.reserve(4 + len);
        writer.put_i32(size);
        self.encode_parts(&mut writer, header_version)
    }
}

impl<'a> IntoOwned for RequestFrame<'a> {
    type Owned = RequestFrame<'static>;

    /// Copies what still borrows from the input, so that the frame can
    /// outlive it (be kept, or sent to another thread).
    // Compiled where it is called, even with `precompile`, like the
    // messages' `into_owned` it calls.
    #[inline]
    fn into_owned(self) -> RequestFrame<'static> {
        RequestFrame {
            header: self.header.into_owned(),
            body: self.body.into_owned(),
        }
    }
}
