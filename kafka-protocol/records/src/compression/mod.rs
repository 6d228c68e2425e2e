//! Compression codecs of record batches and legacy message sets.
//!
//! Every codec sits behind the cargo feature of the same name. Decompression
//! is streamed through a size bound, so a compression bomb ends in
//! [`RecordsError::DecompressedSizeExceeded`] after at most the limit (plus one
//! read chunk) has been produced, never in an out-of-memory kill.

use crate::error::RecordsError;

mod bound;
#[cfg(feature = "gzip")]
mod gzip;
pub(crate) mod kind;
#[cfg(feature = "lz4")]
mod lz4;
#[cfg(feature = "snappy")]
mod snappy;
#[cfg(feature = "zstd")]
mod zstd;

pub(crate) use bound::Bound;
pub use kind::Compression;

/// Decompresses `data`, failing once the output would pass `max_size` bytes.
///
/// Snappy input may be raw or xerial-framed; LZ4 input is the LZ4 frame
/// format. With [`Compression::None`] the data is copied as is.
pub fn decompress(
    codec: Compression,
    data: &[u8],
    max_size: usize,
) -> Result<Vec<u8>, RecordsError> {
    decompress_at(codec, data, &Bound::new(codec, 0, max_size), false)
}

/// Compresses `data` the way this module writes record batches: gzip at the
/// default level, raw snappy (as librdkafka writes), an LZ4 frame with 64 KiB
/// independent blocks and no checksums, zstd at its default level.
pub fn compress(codec: Compression, data: &[u8]) -> Result<Vec<u8>, RecordsError> {
    match codec {
        Compression::None => Ok(data.to_vec()),
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::compress(data),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::compress(data),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::compress(data),
        #[cfg(feature = "zstd")]
        Compression::Zstd => self::zstd::compress(data),
        #[allow(unreachable_patterns)]
        disabled => Err(RecordsError::CodecNotEnabled { codec: disabled }),
    }
}

/// Decompresses with a bound. `legacy_lz4_checksum` accepts the LZ4 frame
/// header checksum that Kafka wrote in magic 0 messages (computed over the
/// magic number too, against the LZ4 frame specification).
#[cfg_attr(not(feature = "lz4"), allow(unused_variables))]
pub(crate) fn decompress_at(
    codec: Compression,
    data: &[u8],
    bound: &Bound,
    legacy_lz4_checksum: bool,
) -> Result<Vec<u8>, RecordsError> {
    match codec {
        Compression::None => {
            if data.len() > bound.limit() {
                return Err(bound.exceeded());
            }
            Ok(data.to_vec())
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => gzip::decompress(data, bound),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::decompress(data, bound),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::decompress(data, bound, legacy_lz4_checksum),
        #[cfg(feature = "zstd")]
        Compression::Zstd => self::zstd::decompress(data, bound),
        #[allow(unreachable_patterns)]
        disabled => Err(RecordsError::CodecNotEnabled { codec: disabled }),
    }
}

/// The codec named by the low three bits of `attributes`.
///
/// `offset` is where the attributes sit, for the error.
pub(crate) fn codec_of(attributes: i16, offset: usize) -> Result<Compression, RecordsError> {
    let id = (attributes & 0x07) as u8;
    Compression::from_id(id).ok_or(RecordsError::UnknownCodec { offset, codec: id })
}
