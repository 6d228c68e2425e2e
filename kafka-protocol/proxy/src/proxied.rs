//! A request and a response as they cross the proxy: the raw frame, with
//! what was read of its header, decoded further only on demand.

use bytes::Bytes;

use kafka_wire::frame::{
    expects_response, peek_request, response_body_version, RequestFrame, ResponseFrame,
};
use kafka_wire::messages::{RequestHeader, ResponseHeader};
use kafka_wire::runtime::{DecodeError, DecodeErrorKind, Message, Reader};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};

use super::error::{ProxyError, Side};

/// A request frame from the client, its header read and its body left as
/// bytes.
#[derive(Debug, Clone)]
pub struct ProxiedRequest {
    frame: Bytes,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    header_len: usize,
    expects_response: bool,
}

impl ProxiedRequest {
    /// Reads the header of a request frame (without size prefix).
    ///
    /// A request of an api this crate does not know keeps only its first
    /// eight bytes (api key, version and correlation id) as its header: it
    /// can be passed through but not decoded.
    pub fn parse(frame: Bytes) -> Result<Self, ProxyError> {
        let bad = |source| ProxyError::BadHeader {
            side: Side::Client,
            source,
        };
        let peek = peek_request(&frame).map_err(bad)?;
        let (header_len, expects_response) = match peek.api() {
            Some(api) => {
                let mut reader = Reader::new(&frame);
                RequestHeader::decode_prefix(
                    &mut reader,
                    api.request_header_version(peek.api_version),
                )
                .map_err(bad)?;
                let header_len = reader.offset();
                let expects = expects_response(api, peek.api_version, &frame[header_len..]);
                (header_len, expects)
            }
            None => (8, true),
        };
        Ok(ProxiedRequest {
            frame,
            api_key: peek.api_key,
            api_version: peek.api_version,
            correlation_id: peek.correlation_id,
            header_len,
            expects_response,
        })
    }

    /// The api, when this crate knows its key.
    pub fn api(&self) -> Option<ApiKey> {
        ApiKey::from_key(self.api_key)
    }

    /// The api key as sent.
    pub fn api_key(&self) -> i16 {
        self.api_key
    }

    /// The api version as sent.
    pub fn api_version(&self) -> i16 {
        self.api_version
    }

    /// The correlation id the response will echo.
    pub fn correlation_id(&self) -> i32 {
        self.correlation_id
    }

    /// Whether the broker answers it: every request but a Produce with
    /// `acks=0`.
    pub fn expects_response(&self) -> bool {
        self.expects_response
    }

    /// The whole frame, without its size prefix.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// The header's bytes.
    pub fn header_bytes(&self) -> &[u8] {
        &self.frame[..self.header_len]
    }

    /// The body's bytes, undecoded.
    pub fn body_bytes(&self) -> &[u8] {
        &self.frame[self.header_len..]
    }

    pub(crate) fn frame_bytes(&self) -> &Bytes {
        &self.frame
    }

    /// Decodes the header (client id included).
    pub fn header(&self) -> Result<RequestHeader<'_>, DecodeError> {
        let api = self.known_api()?;
        let mut reader = Reader::new(&self.frame);
        RequestHeader::decode_prefix(&mut reader, api.request_header_version(self.api_version))
    }

    /// The client id from the header, when it has one and it decodes.
    pub fn client_id(&self) -> Option<String> {
        self.header()
            .ok()
            .and_then(|h| h.client_id.map(|c| c.into_owned()))
    }

    /// Decodes the body at the request's version; offsets in errors count
    /// from the start of the frame.
    pub fn decode_body(&self) -> Result<RequestBody<'_>, DecodeError> {
        let api = self.known_api()?;
        RequestBody::decode(self.body_bytes(), api, self.api_version)
            .map_err(|e| e.shifted(self.header_len))
    }

    /// Decodes the whole frame.
    pub fn decode(&self) -> Result<RequestFrame<'_>, DecodeError> {
        RequestFrame::decode(&self.frame)
    }

    /// The same request holding only its header's bytes, to remember it
    /// without its body.
    pub(crate) fn header_only(&self) -> ProxiedRequest {
        ProxiedRequest {
            frame: Bytes::copy_from_slice(self.header_bytes()),
            ..self.clone()
        }
    }

    fn known_api(&self) -> Result<ApiKey, DecodeError> {
        self.api().ok_or_else(|| {
            DecodeError::new(0, DecodeErrorKind::UnknownApiKey(self.api_key))
                .in_field("request_api_key")
        })
    }
}

/// A response frame from the broker, paired with the request it answers.
#[derive(Debug, Clone)]
pub struct ProxiedResponse {
    frame: Bytes,
    api_key: i16,
    api: Option<ApiKey>,
    version: i16,
    correlation_id: i32,
    header_len: usize,
}

impl ProxiedResponse {
    /// Reads the header of a response frame to `request`.
    ///
    /// An ApiVersions response always has header v0, and its body is read
    /// at the version [`response_body_version`] gives: v0 for the answer to
    /// a version the broker does not support.
    pub fn parse(frame: Bytes, request: &ProxiedRequest) -> Result<Self, ProxyError> {
        let bad = |source| ProxyError::BadHeader {
            side: Side::Broker,
            source,
        };
        let api = request.api();
        let header_len = match api {
            Some(api) => {
                let mut reader = Reader::new(&frame);
                ResponseHeader::decode_prefix(
                    &mut reader,
                    api.response_header_version(request.api_version()),
                )
                .map_err(bad)?;
                reader.offset()
            }
            None => {
                Reader::new(&frame)
                    .read_i32()
                    .map_err(|e| bad(e.in_field("correlation_id")))?;
                4
            }
        };
        let version = match api {
            Some(api) => response_body_version(api, request.api_version(), &frame[header_len..]),
            None => request.api_version(),
        };
        Ok(ProxiedResponse {
            correlation_id: correlation_id(&frame).map_err(bad)?,
            frame,
            api_key: request.api_key(),
            api,
            version,
            header_len,
        })
    }

    /// The api of the request it answers, when this crate knows it.
    pub fn api(&self) -> Option<ApiKey> {
        self.api
    }

    /// The version its body is written at: the request's, except for the
    /// ApiVersions fallback to v0.
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The correlation id from its header.
    pub fn correlation_id(&self) -> i32 {
        self.correlation_id
    }

    /// The whole frame, without its size prefix.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// The header's bytes.
    pub fn header_bytes(&self) -> &[u8] {
        &self.frame[..self.header_len]
    }

    /// The body's bytes, undecoded.
    pub fn body_bytes(&self) -> &[u8] {
        &self.frame[self.header_len..]
    }

    pub(crate) fn frame_bytes(&self) -> &Bytes {
        &self.frame
    }

    /// Decodes the body at [`ProxiedResponse::version`]; offsets in errors
    /// count from the start of the frame.
    pub fn decode_body(&self) -> Result<ResponseBody<'_>, DecodeError> {
        let api = self.known_api()?;
        ResponseBody::decode(self.body_bytes(), api, self.version)
            .map_err(|e| e.shifted(self.header_len))
    }

    /// Decodes the whole frame.
    pub fn decode(&self) -> Result<ResponseFrame<'_>, DecodeError> {
        let api = self.known_api()?;
        let mut reader = Reader::new(&self.frame);
        let header =
            ResponseHeader::decode_prefix(&mut reader, api.response_header_version(self.version))?;
        Ok(ResponseFrame {
            header,
            body: self.decode_body()?,
        })
    }

    fn known_api(&self) -> Result<ApiKey, DecodeError> {
        self.api.ok_or_else(|| {
            DecodeError::new(0, DecodeErrorKind::UnknownApiKey(self.api_key))
                .in_field("request_api_key")
        })
    }
}

/// The correlation id at the front of a response frame.
pub(crate) fn correlation_id(frame: &[u8]) -> Result<i32, DecodeError> {
    Reader::new(frame)
        .read_i32()
        .map_err(|e| e.in_field("correlation_id"))
}
