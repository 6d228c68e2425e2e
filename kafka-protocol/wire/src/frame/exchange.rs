//! The rules of an exchange that neither header states: whether a request
//! gets an answer, where its body starts as Kafka's broker reads it, and at
//! which version the answer's body is written. Frames, the proxy and
//! clients all ask these; this is their one home.
//!
//! A relay must decide these as Kafka's broker decides them, also for bytes
//! this crate's strict reader refuses: Kafka's Java reader replaces invalid
//! UTF-8 instead of refusing it, takes any negative length of a nullable
//! string as null, and keeps duplicate unknown tags. So the rules here skip
//! strings by their length and never look inside them.

use crate::runtime::{DecodeError, Reader};
use crate::ApiKey;
#[cfg(feature = "api-versions")]
use crate::ErrorCode;

/// Whether the receiver answers a request of `api` at `version` whose body
/// is `body`: every request but a Produce with `acks = 0`, and a Produce
/// below version 3, which Kafka 4 refuses by closing the connection.
///
/// The `acks` of a Produce is read as Kafka's broker reads it (see
/// [`produce_acks`]), so that a body this crate's reader refuses, but
/// Kafka's accepts, is judged as Kafka judges it. A Produce too short to
/// hold its `acks` is taken to expect an answer: Kafka cannot parse it
/// either, and closes the connection.
pub fn expects_response(api: ApiKey, version: i16, body: &[u8]) -> bool {
    match api {
        #[cfg(feature = "produce")]
        ApiKey::Produce if version < 3 => false,
        #[cfg(feature = "produce")]
        ApiKey::Produce => produce_acks(version, body) != Some(0),
        // Unreachable when Produce is the only API compiled.
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (version, body);
            true
        }
    }
}

/// The `acks` of a Produce body at `version` (3 or later), read as Kafka's
/// broker reads it: the transactional id before it is skipped by its
/// length, whatever its bytes. `None` when the body is too short to hold
/// them.
pub fn produce_acks(version: i16, body: &[u8]) -> Option<i16> {
    let mut reader = Reader::without_heap(body);
    skip_nullable_string(&mut reader, version >= 9).ok()?;
    reader.read_i16().ok()
}

/// The length of a request frame's header (without size prefix), read as
/// Kafka's broker reads it: api key, version, correlation id, the client
/// id skipped by its length whatever its bytes (a negative length is
/// null), and from header version 2 on the tagged fields, skipped by their
/// sizes. Fails only where Kafka's reader fails too: the frame is cut
/// short, or a varint is longer than five bytes.
pub fn request_header_len(api: ApiKey, version: i16, frame: &[u8]) -> Result<usize, DecodeError> {
    let mut reader = Reader::without_heap(frame);
    let in_header = |e: DecodeError, field| e.in_field(field).in_message("RequestHeader");
    reader.take(8).map_err(|e| in_header(e, "correlation_id"))?;
    skip_nullable_string(&mut reader, false).map_err(|e| in_header(e, "client_id"))?;
    if api.request_header_version(version) >= 2 {
        skip_tagged_fields(&mut reader).map_err(|e| in_header(e, "_tagged_fields"))?;
    }
    Ok(reader.offset())
}

/// Skips a nullable string by its length: a uvarint of the length plus one
/// when `compact`, else an int16 whose negative values mean null.
fn skip_nullable_string(reader: &mut Reader<'_>, compact: bool) -> Result<(), DecodeError> {
    let len = if compact {
        usize::try_from(reader.read_uvarint()?)
            .unwrap_or(usize::MAX)
            .saturating_sub(1)
    } else {
        usize::try_from(reader.read_i16()?).unwrap_or(0)
    };
    reader.take(len).map(|_| ())
}

/// Skips a tagged-field section: a count, then each field's tag, size and
/// bytes. Duplicate and unordered tags are skipped like any other, as
/// Kafka keeps them.
fn skip_tagged_fields(reader: &mut Reader<'_>) -> Result<(), DecodeError> {
    let count = reader.read_uvarint()?;
    for _ in 0..count {
        reader.read_uvarint()?;
        let size = reader.read_uvarint()?;
        reader.take(usize::try_from(size).unwrap_or(usize::MAX))?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Produce v3: transactional id `00 01 ff` (one byte, not UTF-8), then
    /// acks, timeout and no topics.
    fn produce_v3(acks: i16) -> Vec<u8> {
        let mut body = vec![0x00, 0x01, 0xff];
        body.extend_from_slice(&acks.to_be_bytes());
        body.extend_from_slice(&1000i32.to_be_bytes());
        body.extend_from_slice(&0i32.to_be_bytes());
        body
    }

    #[test]
    #[cfg(feature = "produce")]
    fn acks_are_read_past_a_transactional_id_that_is_not_utf8() {
        assert_eq!(produce_acks(3, &produce_v3(0)), Some(0));
        assert!(!expects_response(ApiKey::Produce, 3, &produce_v3(0)));
        assert!(expects_response(ApiKey::Produce, 3, &produce_v3(1)));
        // Any negative length is null, as in Kafka.
        let mut null_id = vec![0xff, 0xfe];
        null_id.extend_from_slice(&0i16.to_be_bytes());
        assert_eq!(produce_acks(3, &null_id), Some(0));
        // Flexible (v9+): a compact string of length 1, then acks.
        assert_eq!(produce_acks(9, &[0x02, 0xff, 0x00, 0x00]), Some(0));
        assert_eq!(produce_acks(9, &[0x00, 0xff, 0xff]), Some(-1));
        // Too short for acks: Kafka closes the connection; not silent.
        assert_eq!(produce_acks(3, &[0x00, 0x05, b'a']), None);
        assert!(expects_response(ApiKey::Produce, 3, &[0x00, 0x05, b'a']));
        // Below v3, Kafka 4 closes the connection: nothing comes back.
        assert!(!expects_response(ApiKey::Produce, 2, &[0, 1]));
    }

    #[test]
    fn header_lengths_skip_client_ids_and_tags_as_kafka_does() {
        let mut v1 = vec![0, 3, 0, 1, 0, 0, 0, 9, 0x00, 0x02, 0xc3, 0x28];
        let len = v1.len();
        v1.extend_from_slice(b"body");
        assert_eq!(request_header_len(ApiKey::Metadata, 1, &v1).ok(), Some(len));
        // Header v2 (Metadata v9+): duplicate unknown tags are kept by
        // Kafka, so skipped here.
        let mut v2 = vec![0, 3, 0, 12, 0, 0, 0, 9, 0xff, 0xff];
        v2.extend_from_slice(&[2, 5, 1, 0xaa, 5, 1, 0xbb]);
        let len = v2.len();
        v2.push(0);
        assert_eq!(
            request_header_len(ApiKey::Metadata, 12, &v2).ok(),
            Some(len)
        );
        let error = request_header_len(ApiKey::Metadata, 12, &v2[..len - 1]).unwrap_err();
        assert_eq!(error.offset(), len - 1);
        assert!(error.to_string().contains("RequestHeader"), "{error}");
    }
}
