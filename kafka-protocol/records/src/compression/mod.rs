//! Compression codecs of record batches and legacy message sets.
//!
//! Every codec sits behind the cargo feature of the same name. Decompression
//! is streamed through a size bound, so a compression bomb ends in
//! [`RecordsError::DecompressedSizeExceeded`] after at most the limit (plus one
//! read chunk) has been produced, never in an out-of-memory kill.

use std::fmt;
#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
use std::io::{ErrorKind, Read};

use super::error::RecordsError;

#[cfg(feature = "gzip")]
mod gzip;
#[cfg(feature = "lz4")]
mod lz4;
#[cfg(feature = "snappy")]
mod snappy;
#[cfg(feature = "zstd")]
mod zstd;

/// The compression codec of a batch, from bits 0-2 of its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// No compression (0).
    #[default]
    None,
    /// gzip (1).
    Gzip,
    /// snappy (2): raw blocks or xerial framing when decoding, raw when
    /// encoding.
    Snappy,
    /// LZ4 frame format (3).
    Lz4,
    /// Zstandard (4).
    Zstd,
}

impl Compression {
    /// All codecs, in id order.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codec with wire id `id` (0-4), or `None` for ids Kafka does not
    /// define.
    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.get(usize::from(id)).copied()
    }

    /// The wire id of the codec (0-4).
    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// The codec's name as Kafka spells it: `none`, `gzip`, `snappy`, `lz4`
    /// or `zstd`. It is also the name of the codec's cargo feature.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// Whether this build can compress and decompress with the codec.
    pub fn is_enabled(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Gzip => cfg!(feature = "gzip"),
            Compression::Snappy => cfg!(feature = "snappy"),
            Compression::Lz4 => cfg!(feature = "lz4"),
            Compression::Zstd => cfg!(feature = "zstd"),
        }
    }

    /// The codec named by the low three bits of `attributes`.
    ///
    /// `offset` is where the attributes sit, for the error.
    pub(crate) fn from_attributes(attributes: i16, offset: usize) -> Result<Self, RecordsError> {
        let id = (attributes & 0x07) as u8;
        Self::from_id(id).ok_or(RecordsError::UnknownCodec { offset, codec: id })
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// Where the compressed data sits and how much it may grow.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound {
    codec: Compression,
    offset: usize,
    limit: usize,
}

impl Bound {
    /// A bound of `limit` output bytes for `codec` data found at `offset`.
    pub(crate) fn new(codec: Compression, offset: usize, limit: usize) -> Self {
        Bound {
            codec,
            offset,
            limit,
        }
    }

    /// The error for output past the limit.
    fn exceeded(&self) -> RecordsError {
        RecordsError::DecompressedSizeExceeded {
            codec: self.codec,
            offset: self.offset,
            limit: self.limit,
        }
    }

    /// The error for corrupt input.
    #[cfg(any(
        feature = "gzip",
        feature = "snappy",
        feature = "lz4",
        feature = "zstd"
    ))]
    fn failed(&self, message: impl fmt::Display) -> RecordsError {
        RecordsError::DecompressionFailed {
            codec: self.codec,
            offset: self.offset,
            message: message.to_string(),
        }
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
            if data.len() > bound.limit {
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

/// Bytes requested from a streaming decoder per read.
#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
const READ_CHUNK: usize = 32 * 1024;

/// Drains a streaming decoder into a `Vec`, never holding more than the
/// bound's limit: the output grows by doubling but never past the limit, and
/// reading stops with an error as soon as a chunk would cross it.
#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
fn read_bounded<R: Read>(mut reader: R, bound: &Bound) -> Result<Vec<u8>, RecordsError> {
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

#[cfg(all(test, any(feature = "gzip", feature = "lz4", feature = "zstd")))]
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
