//! Helpers shared by the fuzz targets: how the first bytes of an input pick
//! the api, version and direction of the message that follows, and a body
//! type over requests and responses.
//!
//! Input layouts (the seeding script `seed-corpus.py` writes the same):
//!
//! - `response_body`: `[api_key, version, body...]`
//! - `round_trip` and `json`: `[kind, api_key, version, body...]`, where
//!   `kind & 1` is 0 for a request and 1 for a response; in `json`, `kind & 2`
//!   set means the body is JSON text rather than wire bytes.
//! - `record_batch` and `record_stream`: `[mode, blob...]`, where `mode & 1`
//!   set means [`fix_checksums`] runs on the blob first.
//!
//! An api key byte that is no known key picks `ApiKey::ALL[byte % len]`; a
//! version byte outside the api's range picks `lowest + byte % span`, so every
//! input selects some valid api and version.

use kafka_wire::runtime::json::Value;
use kafka_wire::runtime::{DecodeError, EncodeError, JsonError};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};

/// Whether a message is a request or a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A request body.
    Request,
    /// A response body.
    Response,
}

/// The api named by `byte`: its key when known, else an index into
/// [`ApiKey::ALL`].
pub fn select_api(byte: u8) -> ApiKey {
    ApiKey::from_key(i16::from(byte)).unwrap_or(ApiKey::ALL[usize::from(byte) % ApiKey::ALL.len()])
}

/// A valid version of `api` named by `byte`: the byte itself when valid,
/// else `lowest + byte % span`.
pub fn select_version(api: ApiKey, byte: u8) -> i16 {
    let (lowest, highest) = (api.lowest_version(), api.highest_version());
    let version = i16::from(byte);
    if (lowest..=highest).contains(&version) {
        version
    } else {
        lowest + version % (highest - lowest + 1)
    }
}

/// Splits `[kind, api, version, rest...]`; `None` when shorter than three
/// bytes. Returns the raw kind byte so that targets can use its other bits.
pub fn split_selector(data: &[u8]) -> Option<(u8, Kind, ApiKey, i16, &[u8])> {
    let (&[kind_byte, api_byte, version_byte], rest) = data.split_first_chunk::<3>()?;
    let kind = if kind_byte & 1 == 0 {
        Kind::Request
    } else {
        Kind::Response
    };
    let api = select_api(api_byte);
    Some((
        kind_byte,
        kind,
        api,
        select_version(api, version_byte),
        rest,
    ))
}

/// A request or response body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body<'a> {
    /// A request body.
    Request(RequestBody<'a>),
    /// A response body.
    Response(ResponseBody<'a>),
}

impl<'a> Body<'a> {
    /// Decodes a body of `kind` from exactly `input`.
    pub fn decode(
        kind: Kind,
        api: ApiKey,
        version: i16,
        input: &'a [u8],
    ) -> Result<Self, DecodeError> {
        match kind {
            Kind::Request => RequestBody::decode(input, api, version).map(Body::Request),
            Kind::Response => ResponseBody::decode(input, api, version).map(Body::Response),
        }
    }

    /// Reads the JSON form of a body of `kind`.
    pub fn from_json(
        kind: Kind,
        api: ApiKey,
        version: i16,
        value: &Value,
    ) -> Result<Self, JsonError> {
        match kind {
            Kind::Request => RequestBody::from_json(value, api, version).map(Body::Request),
            Kind::Response => ResponseBody::from_json(value, api, version).map(Body::Response),
        }
    }

    /// The exact encoded size at `version`.
    pub fn encoded_len(&self, version: i16) -> usize {
        match self {
            Body::Request(body) => body.encoded_len(version),
            Body::Response(body) => body.encoded_len(version),
        }
    }

    /// Encodes the body at `version` into a new vector.
    pub fn to_bytes(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        let mut buf = Vec::with_capacity(self.encoded_len(version));
        match self {
            Body::Request(body) => body.encode(&mut buf, version)?,
            Body::Response(body) => body.encode(&mut buf, version)?,
        }
        Ok(buf)
    }

    /// The JSON form at `version`.
    pub fn to_json(&self, version: i16) -> Value {
        match self {
            Body::Request(body) => body.to_json(version),
            Body::Response(body) => body.to_json(version),
        }
    }

    /// True when the value holds a NaN, which compares unequal to itself and
    /// whose payload the JSON form does not keep.
    pub fn has_nan(&self) -> bool {
        format!("{self:?}").contains("NaN")
    }
}

/// Encodes `body`, checking that encoding succeeds and that the computed size
/// is the encoded length; panics (a fuzz failure) otherwise.
pub fn encode_checked(body: &Body<'_>, version: i16, what: &str) -> Vec<u8> {
    let len = body.encoded_len(version);
    let bytes = body
        .to_bytes(version)
        .unwrap_or_else(|e| panic!("{what}: encoding a decoded value failed: {e}"));
    assert_eq!(
        bytes.len(),
        len,
        "{what}: encoded_len disagrees with the encoding"
    );
    bytes
}

/// Rewrites the CRC of each top-level entry: CRC-32C from the attributes
/// (byte 21) for magic 2, CRC-32 from the magic byte (16) for magic 0 and 1.
pub fn fix_checksums(blob: &mut [u8]) {
    let mut pos = 0;
    while let Some(size) = blob.get(pos + 8..pos + 12) {
        let size = i32::from_be_bytes([size[0], size[1], size[2], size[3]]);
        let Some(end) = usize::try_from(size).ok().map(|size| pos + 12 + size) else {
            return;
        };
        if end > blob.len() || end < pos + 22 {
            return;
        }
        match blob[pos + 16] {
            2 => {
                let crc = crc32c::crc32c(&blob[pos + 21..end]);
                blob[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
            }
            0 | 1 => {
                let crc = crc32fast::hash(&blob[pos + 16..end]);
                blob[pos + 12..pos + 16].copy_from_slice(&crc.to_be_bytes());
            }
            _ => return,
        }
        pos = end;
    }
}
