//! Settings for decoding.

/// Default for [`DecodeOptions::max_decompressed_size`]: 64 MiB.
///
/// Above the broker's default `message.max.bytes` (about 1 MiB) and the
/// consumer's default `max.partition.fetch.bytes` (1 MiB) with ample room for
/// compression ratios, yet small enough to decode on any machine.
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 64 * 1024 * 1024;

/// Default for [`DecodeOptions::max_total_decompressed_size`]: 1 GiB, sixteen
/// batches at the default per-batch limit.
///
/// A consumer's default `fetch.max.bytes` (50 MiB) of compressed batches fits
/// at a compression ratio of 20, while a blob of compression bombs stops
/// after about a second of decompression work.
pub const DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE: usize = 1024 * 1024 * 1024;

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
    /// Most bytes all the compressed batches of one blob may decompress to,
    /// together, when walked by [`Batches`](super::Batches) (and so by
    /// [`RecordSet::parse`](super::RecordSet::parse) and the JSON writers);
    /// more is [`RecordsError::DecompressionBudgetExceeded`].
    ///
    /// Memory does not depend on it, since [`Batches`](super::Batches)
    /// holds one batch at a time: it bounds the work a small blob of
    /// compression bombs can cause. Defaults to
    /// [`DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE`].
    ///
    /// [`RecordsError::DecompressionBudgetExceeded`]: super::RecordsError::DecompressionBudgetExceeded
    pub max_total_decompressed_size: usize,
}

impl DecodeOptions {
    /// The default options.
    pub const fn new() -> Self {
        DecodeOptions {
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
            max_total_decompressed_size: DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE,
        }
    }

    /// These options with another per-batch decompression limit.
    pub const fn with_max_decompressed_size(mut self, max: usize) -> Self {
        self.max_decompressed_size = max;
        self
    }

    /// These options with another decompression budget for a whole blob.
    pub const fn with_max_total_decompressed_size(mut self, max: usize) -> Self {
        self.max_total_decompressed_size = max;
        self
    }
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self::new()
    }
}
