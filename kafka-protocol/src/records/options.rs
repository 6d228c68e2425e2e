//! Settings for decoding.

/// Default for [`DecodeOptions::max_decompressed_size`]: 64 MiB.
///
/// Above the broker's default `message.max.bytes` (about 1 MiB) and the
/// consumer's default `max.partition.fetch.bytes` (1 MiB) with ample room for
/// compression ratios, yet small enough to decode on any machine.
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 64 * 1024 * 1024;

/// Settings for decoding record batches and message sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Most bytes one compressed batch (or legacy wrapper message) may
    /// decompress to; more is [`RecordsError::DecompressedSizeExceeded`].
    /// Enforced while decompressing, so no more than about this much is ever
    /// allocated. Defaults to [`DEFAULT_MAX_DECOMPRESSED_SIZE`].
    ///
    /// [`RecordsError::DecompressedSizeExceeded`]: super::RecordsError::DecompressedSizeExceeded
    pub max_decompressed_size: usize,
}

impl DecodeOptions {
    /// The default options.
    pub const fn new() -> Self {
        DecodeOptions {
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
        }
    }

    /// These options with another decompression limit.
    pub const fn with_max_decompressed_size(mut self, max: usize) -> Self {
        self.max_decompressed_size = max;
        self
    }
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self::new()
    }
}
