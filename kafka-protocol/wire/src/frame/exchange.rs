//! The rules of an exchange that neither header states: whether a request
//! gets an answer, and at which version the answer's body is written.
//! Frames, the proxy and clients all ask these; this is their one home.

#[cfg(feature = "produce")]
use crate::messages::ProduceRequest;
#[cfg(feature = "produce")]
use crate::runtime::{Message, Reader};
use crate::ApiKey;
#[cfg(feature = "api-versions")]
use crate::ErrorCode;

/// Whether the receiver answers a request of `api` at `version` whose body
/// is `body`: every request but a Produce with `acks = 0`.
///
/// A Produce body that does not decode is taken to expect an answer, as a
/// broker would answer it with an error or close the connection. The body
/// is checked without allocating (its arrays stay wire bytes).
pub fn expects_response(api: ApiKey, version: i16, body: &[u8]) -> bool {
    match api {
        #[cfg(feature = "produce")]
        ApiKey::Produce => {
            let mut reader = Reader::without_heap(body);
            ProduceRequest::decode_prefix(&mut reader, version).map_or(true, |p| p.acks != 0)
        }
        // Unreachable when Produce is the only API compiled.
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (version, body);
            true
        }
    }
}

/// The version at which the body of a response to a request of `api` at
/// `version` is written, given the body's bytes.
///
/// It is `version`, with one exception: a broker asked for an ApiVersions
/// version it does not support answers with a version 0 body whose error
/// code is UNSUPPORTED_VERSION (35), listing the versions it has, so that
/// the client can retry with one of them.
pub fn response_body_version(api: ApiKey, version: i16, body: &[u8]) -> i16 {
    match api {
        #[cfg(feature = "api-versions")]
        ApiKey::ApiVersions
            if body.get(..2) == Some(&ErrorCode::UnsupportedVersion.code().to_be_bytes()[..]) =>
        {
            0
        }
        _ => {
            let _ = body;
            version
        }
    }
}
