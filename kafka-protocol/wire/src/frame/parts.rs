//! A frame split into its header and its body: the one place that reads a
//! header, works out which api and version the body has, and decodes the
//! body with error offsets counted from the start of the frame.
//!
//! [`RequestFrame`](super::RequestFrame), [`ResponseFrame`](super::ResponseFrame),
//! the proxy and the command line all go through [`RequestParts`] and
//! [`ResponseParts`], so that the rule lives here alone:
//!
//! 1. a request's api key and version (its first four bytes) choose the
//!    header version, and an api key this crate does not know is refused;
//!    a response's header version comes from the request it answers;
//! 2. the header is decoded once, and the body starts where it ends;
//! 3. the body's version is the request's, except for the ApiVersions
//!    answer to a version the broker does not support, whose body is
//!    written at version 0 (see [`response_body_version`]);
//! 4. an error in the body names its offset in the whole frame.

use crate::messages::{RequestHeader, ResponseHeader};
use crate::runtime::{DecodeError, DecodeErrorKind, DecodeOptions, Message, Reader};
use crate::{ApiKey, RequestBody, ResponseBody};

use super::exchange::{expects_response, response_body_version};

/// A request frame (without its size prefix) split at its body: the header
/// decoded, the body still bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestParts<'a> {
    /// The header.
    pub header: RequestHeader<'a>,
    /// The api the header's key names.
    pub api: ApiKey,
    /// The body's bytes, undecoded.
    pub body: &'a [u8],
    /// Where the body starts in the frame: the header's length.
    pub body_offset: usize,
}

impl<'a> RequestParts<'a> {
    /// Decodes the header of a request frame without its size prefix.
    ///
    /// Fails with [`DecodeErrorKind::UnknownApiKey`] for an api key this
    /// crate does not know: its header version, and so where its body
    /// starts, cannot be known.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn split(frame: &'a [u8]) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(frame);
        let (api, version) = request_api(&reader)?;
        let header =
            RequestHeader::decode_prefix(&mut reader, api.request_header_version(version))?;
        let body_offset = reader.offset();
        Ok(RequestParts {
            header,
            api,
            body: reader.rest(),
            body_offset,
        })
    }

    /// The api version, from the header: the body's version too.
    pub fn version(&self) -> i16 {
        self.header.request_api_version
    }

    /// Decodes the body; offsets in errors count from the start of the
    /// frame.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_body(&self) -> Result<RequestBody<'a>, DecodeError> {
        RequestBody::decode_with(self.body, self.api, self.version(), self.body_options())
    }

    /// Decodes the body as [`decode_body`](Self::decode_body) does, but
    /// allocates nothing: every array of structs stays checked wire bytes,
    /// decoded when read (see [`DecodeOptions::without_heap`]). For a body read
    /// once, as a printer or a logger reads it, whatever its size.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_body_without_heap(&self) -> Result<RequestBody<'a>, DecodeError> {
        let options = self.body_options().without_heap();
        RequestBody::decode_with(self.body, self.api, self.version(), options)
    }

    /// How the body is read: its errors name offsets in the frame.
    fn body_options(&self) -> DecodeOptions {
        DecodeOptions::new().with_base(self.body_offset)
    }

    /// Whether the receiver answers this request (see
    /// [`expects_response`]).
    pub fn expects_response(&self) -> bool {
        expects_response(self.api, self.version(), self.body)
    }
}

/// Reads the api key and version at the front of a request frame, leaving
/// `reader` where it was.
fn request_api(reader: &Reader<'_>) -> Result<(ApiKey, i16), DecodeError> {
    let in_header = |e: DecodeError, field| e.in_field(field).in_message(RequestHeader::NAME);
    let mut peek = reader.clone();
    let key = peek
        .read_i16()
        .map_err(|e| in_header(e, "request_api_key"))?;
    let version = peek
        .read_i16()
        .map_err(|e| in_header(e, "request_api_version"))?;
    match ApiKey::from_key(key) {
        Some(api) => Ok((api, version)),
        None => Err(in_header(
            reader.error(DecodeErrorKind::UnknownApiKey(key)),
            "request_api_key",
        )),
    }
}

/// A response frame (without its size prefix) split at its body: the header
/// decoded, the body still bytes, with the api and version it is read at.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseParts<'a> {
    /// The header.
    pub header: ResponseHeader<'a>,
    /// The api of the request it answers.
    pub api: ApiKey,
    /// The version the body is written at: the request's, or 0 for the
    /// ApiVersions answer to a version the broker does not support.
    pub version: i16,
    /// The body's bytes, undecoded.
    pub body: &'a [u8],
    /// Where the body starts in the frame: the header's length.
    pub body_offset: usize,
}

impl<'a> ResponseParts<'a> {
    /// Decodes the header of a response frame, without its size prefix, to
    /// a request of `api` at `request_version`, and works out the body's
    /// version.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn split(frame: &'a [u8], api: ApiKey, request_version: i16) -> Result<Self, DecodeError> {
        let mut reader = Reader::new(frame);
        let header = ResponseHeader::decode_prefix(
            &mut reader,
            api.response_header_version(request_version),
        )?;
        let body_offset = reader.offset();
        let body = reader.rest();
        Ok(ResponseParts {
            header,
            api,
            version: response_body_version(api, request_version, body),
            body,
            body_offset,
        })
    }

    /// Decodes the body at [`version`](Self::version); offsets in errors
    /// count from the start of the frame.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_body(&self) -> Result<ResponseBody<'a>, DecodeError> {
        ResponseBody::decode_with(self.body, self.api, self.version, self.body_options())
    }

    /// Decodes the body as [`decode_body`](Self::decode_body) does, but
    /// allocates nothing: every array of structs stays checked wire bytes,
    /// decoded when read (see [`DecodeOptions::without_heap`]). For a body read
    /// once, as a printer or a logger reads it, whatever its size.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_body_without_heap(&self) -> Result<ResponseBody<'a>, DecodeError> {
        let options = self.body_options().without_heap();
        ResponseBody::decode_with(self.body, self.api, self.version, options)
    }

    /// How the body is read: its errors name offsets in the frame.
    fn body_options(&self) -> DecodeOptions {
        DecodeOptions::new().with_base(self.body_offset)
    }
}
