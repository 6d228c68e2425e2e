//! Where a frame can start in bytes captured mid-stream: the one test that
//! resynchronisation and the search for a connection's client share.

use kafka_wire::frame::{frame_size, peek_request, request_header_len};

/// How far ahead a resynchronisation looks for a header that is not
/// complete yet before giving up on that offset.
pub(crate) const RESYNC_WINDOW: usize = 64 * 1024;

/// Whether a frame can start at the front of some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Candidate {
    /// It can.
    Yes,
    /// It cannot, whatever follows.
    No,
    /// Not enough bytes yet to say.
    NeedMore,
}

/// Whether a request can start at the front of `buf`: a size within `max`
/// and a request header of a known api and version, with a correlation id
/// of zero or more, that fits in the frame.
pub(crate) fn request_at(buf: &[u8], max: usize) -> Candidate {
    let Some(prefix) = buf.first_chunk::<4>() else {
        return Candidate::NeedMore;
    };
    let Ok(size) = frame_size(*prefix, max) else {
        return Candidate::No;
    };
    if size < 10 {
        return Candidate::No;
    }
    let available = &buf[4..];
    let frame = &available[..available.len().min(size)];
    let Ok(peek) = peek_request(frame) else {
        return Candidate::NeedMore;
    };
    let Some(api) = peek.api() else {
        return Candidate::No;
    };
    if !api.supports_version(peek.api_version) || peek.correlation_id < 0 {
        return Candidate::No;
    }
    match request_header_len(api, peek.api_version, frame) {
        Ok(len) if len <= size => Candidate::Yes,
        Ok(_) => Candidate::No,
        Err(_) if frame.len() < size => Candidate::NeedMore,
        Err(_) => Candidate::No,
    }
}

/// Whether a response can start at the front of `buf`: a size within `max`
/// and a correlation id that `awaited` says a request is waiting for.
pub(crate) fn response_at(buf: &[u8], max: usize, awaited: impl Fn(i32) -> bool) -> Candidate {
    let Some(prefix) = buf.first_chunk::<4>() else {
        return Candidate::NeedMore;
    };
    let Ok(size) = frame_size(*prefix, max) else {
        return Candidate::No;
    };
    if size < 4 {
        return Candidate::No;
    }
    let Some(id) = buf[4..].first_chunk::<4>() else {
        return Candidate::NeedMore;
    };
    if awaited(i32::from_be_bytes(*id)) {
        Candidate::Yes
    } else {
        Candidate::No
    }
}
