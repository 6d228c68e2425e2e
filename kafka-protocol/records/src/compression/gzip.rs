//! gzip, through `flate2`.

use std::io::Write;

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use super::bound::{read_bounded, Bound};
use super::kind::Compression;
use crate::error::RecordsError;

/// Decompresses gzip data, accepting several concatenated members as Java's
/// `GZIPInputStream` does.
pub(super) fn decompress(data: &[u8], bound: &Bound) -> Result<Vec<u8>, RecordsError> {
    read_bounded(MultiGzDecoder::new(data), bound)
}

/// Compresses at the default level.
pub(super) fn compress(data: &[u8]) -> Result<Vec<u8>, RecordsError> {
    let failed = |error: std::io::Error| RecordsError::CompressionFailed {
        codec: Compression::Gzip,
        message: error.to_string(),
    };
    let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).map_err(failed)?;
    encoder.finish().map_err(failed)
}
