//! Response frames: a response header and a body. A response does not say
//! which api it answers, so decoding takes the request's api and version.

use crate::messages::ResponseHeader;
use crate::runtime::{DecodeError, Encode, EncodeBuf, EncodeError, Message, Reader, Writer};
use crate::{ApiKey, ResponseBody};

use super::{response_body_version, size_prefix};

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
    /// `api` at `version`. The body is read at the version it is written
    /// at, which is `version` except for the ApiVersions answer to a version
    /// the broker does not support (see [`response_body_version`]).
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode(frame: &'a [u8], api: ApiKey, version: i16) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(frame);
        let header =
            ResponseHeader::decode_prefix(&mut reader, api.response_header_version(version))?;
        let body_start = reader.offset();
        let body_version = response_body_version(api, version, reader.rest());
        let body = ResponseBody::decode(reader.rest(), api, body_version)
            .map_err(|e| e.shifted(body_start))?;
        Ok(ResponseFrame { header, body })
    }

    /// The exact size of the frame at `version`, without its size prefix.
    #[cfg_attr(not(feature = "precompile"), inline)]
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
        let size = size_prefix(len)?;
        let mut writer = buf.writer();
        writer.reserve(4 + len);
        writer.put_i32(size);
        self.encode_parts(&mut writer, version)
    }

    /// Writes the header and the body at `version` into room the caller has
    /// made.
    #[cfg_attr(not(feature = "precompile"), inline)]
    fn encode_parts(&self, writer: &mut Writer<'_>, version: i16) -> Result<(), EncodeError> {
        let header_version = self.body.api_key().response_header_version(version);
        self.header.encode_to_writer(writer, header_version)?;
        self.body.encode_to_writer(writer, version)
    }

    /// Copies what still borrows from the input, so that the frame can
    /// outlive it (be kept, or sent to another thread).
    // Compiled where it is called, even with `precompile`, like the
    // messages' `into_owned` it calls.
    #[inline]
    pub fn into_owned(self) -> ResponseFrame<'static> {
        ResponseFrame {
            header: self.header.into_owned(),
            body: self.body.into_owned(),
        }
    }
}
