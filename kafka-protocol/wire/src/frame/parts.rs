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
//! 4. an error in the body names its offset in the whole frame;
//! 5. a request body is read strictly (every byte must be used) unless the
//!    caller asks to read it as Kafka's broker does
//!    ([`RequestParts::decode_body_lenient`]): then bytes after the body
//!    are ignored and counted.

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

    /// Decodes the body as Kafka's broker reads one: from the front of
    /// what follows the header, with any bytes after it ignored and
    /// counted in [`Lenient::trailing_bytes`] (Kafka's
    /// `RequestContext.parseRequest` never checks that the buffer was used
    /// up; librdkafka 2.16 sends a Metadata v13 with three bytes after its
    /// body, and Kafka answers it). Every other check stays:
    /// [`decode_body`](Self::decode_body) is this with no trailing byte
    /// allowed.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_body_lenient(&self) -> Result<Lenient<RequestBody<'a>>, DecodeError> {
        self.lenient(self.body_options())
    }

    /// [`decode_body_lenient`](Self::decode_body_lenient) without heap, as
    /// [`decode_body_without_heap`](Self::decode_body_without_heap) reads.
    #[cfg_attr(not(feature = "precompile"), inline)]
    pub fn decode_body_lenient_without_heap(
        &self,
    ) -> Result<Lenient<RequestBody<'a>>, DecodeError> {
        self.lenient(self.body_options().without_heap())
    }

    /// The body read with `options`; on trailing bytes after a whole body,
    /// the body read again from the bytes before them.
    fn lenient(&self, options: DecodeOptions) -> Result<Lenient<RequestBody<'a>>, DecodeError> {
        let (api, version) = (self.api, self.version());
        let error = match RequestBody::decode_with(self.body, api, version, options) {
            Ok(value) => {
                return Ok(Lenient {
                    value,
                    trailing_bytes: 0,
                })
            }
            Err(error) => error,
        };
        // Only the body's own end: an error at the end of an inner reader
        // (a tagged field's) does not reach the end of the body.
        let end = error.offset().checked_sub(self.body_offset);
        let trailing = match (error.kind(), end) {
            (DecodeErrorKind::TrailingBytes(n), Some(end)) if end + n == self.body.len() => *n,
            _ => return Err(error),
        };
        match RequestBody::decode_with(
            &self.body[..self.body.len() - trailing],
            api,
            version,
            options,
        ) {
            Ok(value) => Ok(Lenient {
                value,
                trailing_bytes: trailing,
            }),
            Err(_) => Err(error),
        }
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

/// What a lenient read gives ([`RequestParts::decode_body_lenient`],
/// [`RequestFrame::decode_lenient`](super::RequestFrame::decode_lenient)):
/// the value, and how many bytes after it were ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient<T> {
    /// What was read.
    pub value: T,
    /// The bytes after it, ignored as Kafka's broker ignores them; 0 when
    /// the input held exactly the value.
    pub trailing_bytes: usize,
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
