//! Response frames: a response header and a body, at the version the body
//! is written at. A response does not say which api it answers, so
//! decoding takes the request's api and version.

use crate::messages::ResponseHeader;
use crate::runtime::{DecodeError, Encode, EncodeBuf, EncodeError, IntoOwned, Message, Writer};
use crate::{ApiKey, ResponseBody};

use super::{size_prefix, ResponseParts};

/// A response: its header, its body, and the version the body is written
/// at.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFrame<'a> {
    /// The header.
    pub header: ResponseHeader<'a>,
    /// The body.
    pub body: ResponseBody<'a>,
    /// The version of the body: the request's version, except for the
    /// ApiVersions answer to a version the broker does not support, which
    /// is written at version 0 (see
    /// [`response_body_version`](super::response_body_version)). The header
    /// version follows from it: an ApiVersions response always has header
    /// v0.
    pub version: i16,
}

impl<'a> ResponseFrame<'a> {
    /// Decodes a response frame, without its size prefix, to a request of
    /// `api` at `version`. The body is read, and [`ResponseFrame::version`]
    /// set, at the version it is written at, as [`ResponseParts`] works it
    /// out.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode(frame: &'a [u8], api: ApiKey, version: i16) -> Result<Self, DecodeError> {
        let parts = ResponseParts::split(frame, api, version)?;
        let body = parts.decode_body()?;
        Ok(Self::from_parts(parts, body))
    }

    /// Decodes a response frame as [`ResponseFrame::decode`] does, but
    /// allocates nothing (see [`ResponseParts::decode_body_without_heap`]):
    /// for a frame read once, such as one printed.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_without_heap(
        frame: &'a [u8],
        api: ApiKey,
        version: i16,
    ) -> Result<Self, DecodeError> {
        let parts = ResponseParts::split(frame, api, version)?;
        let body = parts.decode_body_without_heap()?;
        Ok(Self::from_parts(parts, body))
    }

    /// The frame of `parts`' header and version and its decoded `body`.
    fn from_parts(parts: ResponseParts<'a>, body: ResponseBody<'a>) -> Self {
        ResponseFrame {
            header: parts.header,
            body,
            version: parts.version,
        }
    }

    /// The header version the frame is written with.
    pub fn header_version(&self) -> i16 {
        self.body.api_key().response_header_version(self.version)
    }

    /// The exact size of the frame, without its size prefix.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn encoded_len(&self) -> usize {
        self.header.encoded_len(self.header_version()) + self.body.encoded_len(self.version)
    }

    /// Encodes the header and body at [`ResponseFrame::version`], without a
    /// size prefix.
    pub fn encode<B: EncodeBuf + ?Sized>(&self, buf: &mut B) -> Result<(), EncodeError> {
        let mut writer = buf.writer();
        writer.reserve(self.encoded_len());
        self.encode_parts(&mut writer)
    }

    /// Encodes the frame with its int32 size prefix.
    pub fn encode_with_size<B: EncodeBuf + ?Sized>(&self, buf: &mut B) -> Result<(), EncodeError> {
        let len = self.encoded_len();
        let size = size_prefix(len)?;
        let mut writer = buf.writer();
        writer.reserve(4 + len);
        writer.put_i32(size);
        self.encode_parts(&mut writer)
    }

    /// Writes the header and the body into room the caller has made.
    #[cfg_attr(not(feature = "precompile"), inline)]
    fn encode_parts(&self, writer: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.header
            .encode_to_writer(writer, self.header_version())?;
        self.body.encode_to_writer(writer, self.version)
    }
}

impl<'a> IntoOwned for ResponseFrame<'a> {
    type Owned = ResponseFrame<'static>;

    /// Copies what still borrows from the input, so that the frame can
    /// outlive it (be kept, or sent to another thread).
    // Compiled where it is called, even with `precompile`, like the
    // messages' `into_owned` it calls.
    #[inline]
    fn into_owned(self) -> ResponseFrame<'static> {
        ResponseFrame {
            header: self.header.into_owned(),
            body: self.body.into_owned(),
            version: self.version,
        }
    }
}
