//! Decompression through a size bound: a compression bomb ends in
//! [`RecordsError::DecompressedSizeExceeded`] after at most the limit (plus
//! one read chunk) has been produced.

#[cfg(any(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
use std::fmt;
#[cfg(any(feature = "gzip", feature = "lz4"))]
use std::io::{ErrorKind, Read};

use super::kind::Compression;
use crate::error::RecordsError;

/// Where the compressed data sits and how much it may grow.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound {
    codec: Compression,
    offset: usize,
    limit: usize,
}

impl Bound {
    /// The most output bytes allowed.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// A bound of `limit` output bytes for `codec` data found at `offset`.
    pub(crate) fn new(codec: Compression, offset: usize, limit: usize) -> Self {
        Bound {
            codec,
            offset,
            limit,
        }
    }

    /// The error for output past the limit.
    pub(crate) fn exceeded(&self) -> RecordsError {
        RecordsError::DecompressedSizeExceeded {
            codec: self.codec,
            offset: self.offset,
            limit: self.limit,
        }
    }

    /// Where the compressed data starts.
    #[cfg(feature = "lz4")]
    pub(crate) fn offset(&self) -> usize {
        self.offset
    }

    /// The error for corrupt input.
    #[cfg(any(
        feature = "gzip",
        feature = "snappy",
        feature = "lz4",
        feature = "zstd"
    ))]
    pub(crate) fn failed(&self, message: impl fmt::Display) -> RecordsError {
        RecordsError::DecompressionFailed {
            codec: self.codec,
            offset: self.offset,
            message: message.to_string(),
        }
    }
}

/// Bytes requested from a streaming decoder per read.
#[cfg(any(feature = "gzip", feature = "lz4"))]
const READ_CHUNK: usize = 32 * 1024;

/// Drains a streaming decoder into a `Vec`, never holding more than the
/// bound's limit: the output grows by doubling but never past the limit, and
/// reading stops with an error as soon as a chunk would cross it.
#[cfg(any(feature = "gzip", feature = "lz4"))]
pub(crate) fn read_bounded<R: Read>(mut reader: R, bound: &Bound) -> Result<Vec<u8>, RecordsError> {
    let mut out = Vec::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(read) => read,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(bound.failed(error)),
        };
        let room = bound.limit.saturating_sub(out.len());
        if read > room {
            return Err(bound.exceeded());
        }
        if out.capacity() - out.len() < read {
            // Double, but never reserve past the limit; `room >= read`.
            out.reserve_exact(out.capacity().max(read).min(room));
        }
        out.extend_from_slice(chunk.get(..read).unwrap_or_default());
    }
}

#[cfg(all(test, any(feature = "gzip", feature = "lz4")))]
mod tests {
    use super::*;

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        // `io::repeat` never ends: only a limit enforced while reading stops it.
        let bound = Bound::new(Compression::Gzip, 3, 1 << 20);
        let error = read_bounded(std::io::repeat(0), &bound).unwrap_err();
        assert_eq!(
            error,
            RecordsError::DecompressedSizeExceeded {
                codec: Compression::Gzip,
                offset: 3,
                limit: 1 << 20
            }
        );
    }
}
