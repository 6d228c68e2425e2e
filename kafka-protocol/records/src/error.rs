//! The error type shared by every decoder and encoder in this module.

use std::fmt;

use super::compression::kind::Compression;

/// Everything that can go wrong while decoding or encoding records.
///
/// Most variants carry an `offset`: the byte position where the problem was
/// found. For data read straight from the input it is the position in that
/// input (the whole records blob when parsing one); for data inside a
/// compressed batch or message it is the position in the decompressed bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordsError {
    /// A stored checksum does not match the checksum of the bytes it covers.
    CrcMismatch {
        /// Start of the batch or message.
        offset: usize,
        /// The checksum stored in the data.
        expected: u32,
        /// The checksum computed over the data.
        computed: u32,
    },

    /// The magic byte is not one this module knows (0, 1 or 2 where allowed).
    BadMagic {
        /// Position of the magic byte.
        offset: usize,
        /// The magic byte found.
        magic: i8,
    },

    /// The input ends before a structure is complete.
    Truncated {
        /// What was being read.
        context: &'static str,
        /// Position where the missing bytes were expected.
        offset: usize,
        /// How many bytes were needed.
        needed: usize,
        /// How many bytes were left.
        available: usize,
    },

    /// A length field disagrees with the bytes it covers.
    LengthMismatch {
        /// What declared the length.
        context: &'static str,
        /// Position of the structure whose length is wrong.
        offset: usize,
        /// The declared length.
        declared: i64,
        /// The bytes the content actually takes, or the bytes available when
        /// the content runs past the declared length.
        actual: usize,
    },

    /// The compression bits name a codec Kafka does not define.
    UnknownCodec {
        /// Position of the attributes holding the codec.
        offset: usize,
        /// The codec id (bits 0-2 of the attributes).
        codec: u8,
    },

    /// The codec is known but its cargo feature is disabled in this build.
    CodecNotEnabled {
        /// The codec that is not compiled in.
        codec: Compression,
    },

    /// The compressed bytes could not be decompressed.
    DecompressionFailed {
        /// The codec in use.
        codec: Compression,
        /// Start of the compressed data.
        offset: usize,
        /// The decoder's own description of the failure.
        message: String,
    },

    /// An LZ4 frame whose blocks depend on one another (its FLG byte lacks
    /// the block independence bit): Kafka's reader takes only frames of
    /// independent blocks, and refuses the batch.
    Lz4DependentBlocks {
        /// Start of the compressed data.
        offset: usize,
    },

    /// Decompressing would produce more than the configured maximum.
    DecompressedSizeExceeded {
        /// The codec in use.
        codec: Compression,
        /// Start of the compressed data.
        offset: usize,
        /// The limit in force (see [`DecodeOptions`](super::DecodeOptions)).
        limit: usize,
    },

    /// Decompressing this batch would take the blob's batches together past
    /// [`DecodeOptions::max_total_decompressed_size`](super::DecodeOptions::max_total_decompressed_size).
    DecompressionBudgetExceeded {
        /// The codec in use.
        codec: Compression,
        /// Start of the compressed data.
        offset: usize,
        /// The budget in force for the whole blob.
        budget: usize,
    },

    /// A codec that the message format does not allow: zstd in a magic 0 or
    /// 1 message, which Kafka refuses (zstd came with magic 2).
    CodecNotAllowed {
        /// The codec found.
        codec: Compression,
        /// The message's magic byte.
        magic: i8,
        /// Position of the attributes holding the codec.
        offset: usize,
    },

    /// The encoder of a codec failed.
    CompressionFailed {
        /// The codec in use.
        codec: Compression,
        /// The encoder's own description of the failure.
        message: String,
    },

    /// A header key is not valid UTF-8.
    InvalidHeaderKey {
        /// Position of the header key (its length field).
        offset: usize,
    },

    /// A zigzag varint runs past 5 bytes, or a varlong past 10, or its last
    /// byte holds bits past 32 (64) bits (a 5th byte above `0x0f`, a 10th
    /// above `0x01`).
    VarintTooLong {
        /// Position of the varint's first byte.
        offset: usize,
    },

    /// A length is negative and not the `-1` that stands for null (or is
    /// negative where null is not allowed).
    NegativeLength {
        /// What the length is for.
        context: &'static str,
        /// Position of the length field.
        offset: usize,
        /// The length found.
        length: i64,
    },

    /// The declared record count cannot be right for the bytes present.
    InvalidRecordCount {
        /// Position of the count field.
        offset: usize,
        /// The declared count.
        count: i32,
    },

    /// The records present disagree with the declared record count.
    RecordCountMismatch {
        /// Position where the disagreement was found.
        offset: usize,
        /// The declared count.
        declared: i32,
        /// The complete records found.
        found: usize,
        /// True when all declared records were read and bytes remain; false
        /// when the bytes ran out first.
        trailing_bytes: bool,
    },

    /// A structure is malformed in a way no other variant describes.
    Invalid {
        /// What was being decoded.
        context: &'static str,
        /// Position of the problem.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },

    /// A value is too large for the field that must hold its length.
    TooLarge {
        /// What is too large.
        context: &'static str,
        /// Its size in bytes.
        size: usize,
    },
}

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordsError::CrcMismatch { offset, expected, computed } => write!(f, "CRC mismatch at offset {offset}: stored {expected:#010x}, computed {computed:#010x}"),
            RecordsError::BadMagic { offset, magic } => write!(f, "unsupported magic {magic} at offset {offset}"),
            RecordsError::Truncated { context, offset, needed, available } => write!(f, "truncated {context} at offset {offset}: needed {needed} bytes, {available} left"),
            RecordsError::LengthMismatch { context, offset, declared, actual } => write!(f, "{context} at offset {offset} declares {declared} bytes but its content takes {actual}"),
            RecordsError::UnknownCodec { offset, codec } => write!(f, "unknown compression codec {codec} at offset {offset}"),
            RecordsError::CodecNotEnabled { codec } => write!(f, "compression codec {codec} is not enabled in this build (cargo feature `{codec}`)"),
            RecordsError::DecompressionFailed { codec, offset, message } => write!(f, "{codec} decompression failed for data at offset {offset}: {message}"),
            RecordsError::Lz4DependentBlocks { offset } => write!(f, "lz4 frame at offset {offset} has dependent blocks, which Kafka's reader refuses"),
            RecordsError::DecompressedSizeExceeded { codec, offset, limit } => write!(f, "{codec} data at offset {offset} decompresses to more than the {limit}-byte limit"),
            RecordsError::DecompressionBudgetExceeded { codec, offset, budget } => write!(f, "{codec} data at offset {offset} takes the blob past its {budget}-byte decompression budget"),
            RecordsError::CodecNotAllowed { codec, magic, offset } => write!(f, "{codec} compression at offset {offset} is not allowed in magic {magic} messages"),
            RecordsError::CompressionFailed { codec, message } => write!(f, "{codec} compression failed: {message}"),
            RecordsError::InvalidHeaderKey { offset } => write!(f, "header key at offset {offset} is not valid UTF-8"),
            RecordsError::VarintTooLong { offset } => write!(f, "over-long varint at offset {offset}"),
            RecordsError::NegativeLength { context, offset, length } => write!(f, "invalid negative {context} {length} at offset {offset}"),
            RecordsError::InvalidRecordCount { offset, count } => write!(f, "invalid record count {count} at offset {offset}"),
            RecordsError::RecordCountMismatch {
                offset,
                declared,
                found,
                trailing_bytes,
            } => {
                let trailing = if *trailing_bytes {
                    " followed by trailing bytes"
                } else {
                    ""
                };
                write!(
                    f,
                    "record count mismatch at offset {offset}: batch declares {declared} records, \
                     found {found}{trailing}"
                )
            }
            RecordsError::Invalid { context, offset, reason } => write!(f, "invalid {context} at offset {offset}: {reason}"),
            RecordsError::TooLarge { context, size } => write!(f, "{context} of {size} bytes is too large to encode"),
        }
    }
}

impl std::error::Error for RecordsError {}
