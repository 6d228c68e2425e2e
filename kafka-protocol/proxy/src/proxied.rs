//! A request and a response as they cross the proxy: the raw frame, with
//! what was read of its header, decoded further only on demand.

use bytes::Bytes;

use kafka_wire::frame::{
    expects_response, peek_request, request_header_len, Lenient, RequestFrame, RequestParts,
    ResponseFrame, ResponseParts,
};
use kafka_wire::messages::RequestHeader;
use kafka_wire::runtime::{DecodeError, DecodeErrorKind, Reader};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};

use super::error::{ProxyError, Side};

/// A frame as it crosses the proxy, without its size prefix, and where its
/// header ends: what a request and a response both keep.
#[derive(Debug, Clone)]
struct RawFrame {
    /// The whole frame.
    frame: Bytes,
    /// The length of its header; the body follows it.
    header_len: usize,
}

/// The byte accessors of [`ProxiedRequest`] and [`ProxiedResponse`], both of
/// which keep their frame as the [`RawFrame`] `raw`.
macro_rules! raw_frame_accessors {
    () => {
        /// The whole frame, without its size prefix.
        pub fn frame(&self) -> &[u8] {
            &self.raw.frame
        }

        /// The header's bytes.
        pub fn header_bytes(&self) -> &[u8] {
            &self.raw.frame[..self.raw.header_len]
        }

        /// The body's bytes, undecoded.
        pub fn body_bytes(&self) -> &[u8] {
            &self.raw.frame[self.raw.header_len..]
        }

        pub(crate) fn frame_bytes(&self) -> &Bytes {
            &self.raw.frame
        }
    };
}

/// A request frame from the client, its header read and its body left as
/// bytes.
#[derive(Debug, Clone)]
pub struct ProxiedRequest {
    raw: RawFrame,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
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
        // Read as Kafka's broker reads it, so that whatever the broker
        // accepts passes, and what it leaves unanswered is not waited for.
        let (header_len, expects_response) = match peek.api() {
            Some(api) => {
                let header_len = request_header_len(api, peek.api_version, &frame).map_err(bad)?;
                let body = &frame[header_len..];
                (header_len, expects_response(api, peek.api_version, body))
            }
            None => (8, true),
        };
        Ok(ProxiedRequest {
            raw: RawFrame { frame, header_len },
            api_key: peek.api_key,
            api_version: peek.api_version,
            correlation_id: peek.correlation_id,
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

    raw_frame_accessors!();

    /// Reads the header again, for the frame's parts (client id included).
    pub fn parts(&self) -> Result<RequestParts<'_>, DecodeError> {
        RequestParts::split(&self.raw.frame)
    }

    /// Decodes the header (client id included).
    pub fn header(&self) -> Result<RequestHeader<'_>, DecodeError> {
        Ok(self.parts()?.header)
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
        self.parts()?.decode_body()
    }

    /// Decodes the body as Kafka's broker reads it: bytes after the body
    /// are ignored and counted (see [`RequestParts::decode_body_lenient`]),
    /// where [`decode_body`](Self::decode_body) refuses them. What a log
    /// shows.
    pub fn decode_body_lenient(&self) -> Result<Lenient<RequestBody<'_>>, DecodeError> {
        self.parts()?.decode_body_lenient()
    }

    /// Decodes the whole frame.
    pub fn decode(&self) -> Result<RequestFrame<'_>, DecodeError> {
        RequestFrame::decode(&self.raw.frame)
    }

    /// The same request holding only its header's bytes, to remember it
    /// without its body.
    pub(crate) fn header_only(&self) -> ProxiedRequest {
        ProxiedRequest {
            raw: RawFrame {
                frame: Bytes::copy_from_slice(self.header_bytes()),
                header_len: self.raw.header_len,
            },
            ..self.clone()
        }
    }
}

/// A response frame from the broker, paired with the request it answers.
#[derive(Debug, Clone)]
pub struct ProxiedResponse {
    raw: RawFrame,
    api_key: i16,
    api: Option<ApiKey>,
    request_version: i16,
    version: i16,
    correlation_id: i32,
}

impl ProxiedResponse {
    /// Reads the header of a response frame to `request`.
    ///
    /// The header and the body's version are read as [`ResponseParts`]
    /// reads them: an ApiVersions response always has header v0, and its
    /// body is written at v0 when it answers a version the broker does not
    /// support.
    pub fn parse(frame: Bytes, request: &ProxiedRequest) -> Result<Self, ProxyError> {
        let bad = |source| ProxyError::BadHeader {
            side: Side::Broker,
            source,
        };
        let (header_len, version) = match request.api() {
            Some(api) => {
                let parts =
                    ResponseParts::split(&frame, api, request.api_version()).map_err(bad)?;
                (parts.body_offset, parts.version)
            }
            None => (4, request.api_version()),
        };
        Ok(ProxiedResponse {
            correlation_id: correlation_id(&frame).map_err(bad)?,
            raw: RawFrame { frame, header_len },
            api_key: request.api_key(),
            api: request.api(),
            request_version: request.api_version(),
            version,
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

    raw_frame_accessors!();

    /// Reads the header again, for the frame's parts.
    pub fn parts(&self) -> Result<ResponseParts<'_>, DecodeError> {
        ResponseParts::split(&self.raw.frame, self.known_api()?, self.request_version)
    }

    /// Decodes the body at [`ProxiedResponse::version`]; offsets in errors
    /// count from the start of the frame.
    pub fn decode_body(&self) -> Result<ResponseBody<'_>, DecodeError> {
        self.parts()?.decode_body()
    }

    /// Decodes the whole frame.
    pub fn decode(&self) -> Result<ResponseFrame<'_>, DecodeError> {
        ResponseFrame::decode(&self.raw.frame, self.known_api()?, self.request_version)
    }

    /// The api of the request, or the error that says its key is unknown.
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
