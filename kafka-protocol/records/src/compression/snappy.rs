//! snappy, through `snap`: raw blocks and the xerial framing of Java clients.
//!
//! Java producers wrap snappy in the framing of xerial's `SnappyOutputStream`:
//! the magic `0x82 "SNAPPY" 0x00`, a version `i32` and a compatible-version
//! `i32`, then blocks of `[i32 big-endian length][raw snappy block]`.
//! librdkafka and most other clients write one raw snappy block. Decoding
//! accepts both, detecting the magic as xerial's `SnappyInputStream` does;
//! encoding writes a raw block, like librdkafka, which every Kafka client and
//! the broker read.

use snap::raw::{decompress_len, Decoder, Encoder};

use super::bound::Bound;
use super::kind::Compression;
use crate::cursor::Cursor;
use crate::error::RecordsError;

/// The magic that opens a xerial-framed stream.
pub(super) const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// Magic, version and compatible version.
const XERIAL_HEADER_LEN: usize = 16;
/// No snappy element yields more than 64 bytes from 3 input bytes, so no
/// valid block decompresses to more than this many times its size.
const MAX_EXPANSION: usize = 22;

/// Decompresses raw or xerial-framed snappy data.
pub(super) fn decompress(data: &[u8], bound: &Bound) -> Result<Vec<u8>, RecordsError> {
    let mut out = Vec::new();
    if data.starts_with(&XERIAL_MAGIC) {
        decompress_xerial(data, bound, &mut out)?;
    } else {
        decompress_block(data, bound, &mut out)?;
    }
    Ok(out)
}

/// Compresses into one raw snappy block.
pub(super) fn compress(data: &[u8]) -> Result<Vec<u8>, RecordsError> {
    Encoder::new()
        .compress_vec(data)
        .map_err(|error| RecordsError::CompressionFailed {
            codec: Compression::Snappy,
            message: error.to_string(),
        })
}

/// Decompresses the blocks of a xerial stream, also accepting several
/// streams back to back as xerial does.
fn decompress_xerial(data: &[u8], bound: &Bound, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    let mut reader = Cursor::new(data, 0, "xerial snappy stream");
    while !reader.is_empty() {
        let rest = data
            .get(data.len() - reader.remaining()..)
            .unwrap_or_default();
        if rest.starts_with(&XERIAL_MAGIC) {
            reader
                .read_bytes(XERIAL_HEADER_LEN)
                .map_err(|e| bound.failed(e))?;
            continue;
        }
        let len = reader.read_i32().map_err(|e| bound.failed(e))?;
        let len = usize::try_from(len).map_err(|_| bound.failed("negative xerial block length"))?;
        let block = reader.read_bytes(len).map_err(|e| bound.failed(e))?;
        decompress_block(block, bound, out)?;
    }
    Ok(())
}

/// Appends the decompression of one raw block to `out`, checking the length
/// the block declares against the limit before allocating.
fn decompress_block(block: &[u8], bound: &Bound, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    let len = decompress_len(block).map_err(|e| bound.failed(e))?;
    if len > bound.limit().saturating_sub(out.len()) {
        return Err(bound.exceeded());
    }
    if len > block.len().saturating_mul(MAX_EXPANSION) {
        return Err(bound.failed("declared length is impossible for the block size"));
    }
    if len == 0 {
        // `Decoder::decompress` rejects an empty input; a zero length needs
        // no work anyway.
        return Ok(());
    }
    let start = out.len();
    out.resize(start + len, 0);
    let target = out.get_mut(start..).unwrap_or_default();
    let written = Decoder::new()
        .decompress(block, target)
        .map_err(|e| bound.failed(e))?;
    out.truncate(start + written);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(limit: usize) -> Bound {
        Bound::new(Compression::Snappy, 0, limit)
    }

    fn xerial(blocks: &[&[u8]]) -> Vec<u8> {
        let mut out = XERIAL_MAGIC.to_vec();
        out.extend_from_slice(&1i32.to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes());
        for block in blocks {
            let compressed = Encoder::new().compress_vec(block).unwrap();
            out.extend_from_slice(&(compressed.len() as i32).to_be_bytes());
            out.extend_from_slice(&compressed);
        }
        out
    }

    #[test]
    fn raw_and_xerial_decode() {
        let data = b"hello hello hello hello snappy".repeat(10);
        let raw = compress(&data).unwrap();
        assert_eq!(decompress(&raw, &bound(1 << 20)).unwrap(), data);

        let framed = xerial(&[&data[..100], &data[100..]]);
        assert_eq!(decompress(&framed, &bound(1 << 20)).unwrap(), data);

        // Two xerial streams back to back.
        let mut twice = framed.clone();
        twice.extend_from_slice(&framed);
        assert_eq!(decompress(&twice, &bound(1 << 20)).unwrap(), data.repeat(2));
    }

    #[test]
    fn limits_and_corruption() {
        let data = vec![0u8; 10_000];
        let raw = compress(&data).unwrap();
        assert!(matches!(
            decompress(&raw, &bound(9_999)),
            Err(RecordsError::DecompressedSizeExceeded { limit: 9_999, .. })
        ));
        let framed = xerial(&[&data, &data]);
        assert!(matches!(
            decompress(&framed, &bound(15_000)),
            Err(RecordsError::DecompressedSizeExceeded { .. })
        ));
        // A raw header claiming 1 GiB from 5 bytes is rejected unallocated.
        let claim = [0x80, 0x80, 0x80, 0x80, 0x04];
        assert!(matches!(
            decompress(&claim, &bound(usize::MAX)),
            Err(RecordsError::DecompressionFailed { .. })
        ));
        // A xerial block length past the end.
        let mut cut = xerial(&[&data]);
        cut.truncate(cut.len() - 1);
        assert!(matches!(
            decompress(&cut, &bound(1 << 20)),
            Err(RecordsError::DecompressionFailed { .. })
        ));
    }
}
