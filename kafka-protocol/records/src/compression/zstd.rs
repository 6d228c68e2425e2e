//! Zstandard, through the `zstd` crate.

use super::bound::{read_bounded, Bound};
use super::kind::Compression;
use crate::error::RecordsError;

/// Smallest window (log2) accepted whatever the limit: 8 MiB, the window
/// of every standard (non-"ultra") compression level.
const MIN_WINDOW_LOG: u32 = 23;
/// Largest window (log2) ever accepted: 128 MiB, zstd's default maximum.
const MAX_WINDOW_LOG: u32 = 27;

/// Decompresses one or more concatenated zstd frames.
///
/// The decoder allocates its window up front from the frame header, so the
/// window it accepts is capped: the smallest power of two holding the limit,
/// kept between 8 MiB and 128 MiB.
pub(super) fn decompress(data: &[u8], bound: &Bound) -> Result<Vec<u8>, RecordsError> {
    let mut decoder =
        ::zstd::stream::read::Decoder::with_buffer(data).map_err(|e| bound.failed(e))?;
    decoder
        .window_log_max(window_log(bound.limit()))
        .map_err(|e| bound.failed(e))?;
    read_bounded(decoder, bound)
}

/// Compresses at zstd's default level.
pub(super) fn compress(data: &[u8]) -> Result<Vec<u8>, RecordsError> {
    ::zstd::stream::encode_all(data, 0).map_err(|error| RecordsError::CompressionFailed {
        codec: Compression::Zstd,
        message: error.to_string(),
    })
}

/// log2 of the smallest power of two at least `limit`, clamped.
fn window_log(limit: usize) -> u32 {
    let log = usize::BITS - limit.saturating_sub(1).leading_zeros();
    log.clamp(MIN_WINDOW_LOG, MAX_WINDOW_LOG)
}

#[cfg(test)]
mod tests {
    use super::window_log;

    #[test]
    fn window_follows_limit_within_bounds() {
        assert_eq!(window_log(1), 23);
        assert_eq!(window_log(64 << 20), 26);
        assert_eq!(window_log((64 << 20) + 1), 27);
        assert_eq!(window_log(usize::MAX), 27);
    }
}
