//! LZ4 frame format, through `lz4_flex`.
//!
//! Kafka (magic 1 and 2) uses the standard LZ4 frame format. Kafka before
//! 0.10 (magic 0) computed the frame descriptor's header checksum over the
//! magic number as well, so such frames fail a standard decoder; for magic 0
//! data the checksum byte is recomputed before decoding, which accepts both
//! the broken and the correct checksum.

use lz4_flex::frame::{BlockMode, BlockSize, FrameDecoder, FrameEncoder, FrameInfo};

use super::bound::{read_bounded, Bound};
use super::kind::Compression;
use crate::error::RecordsError;

/// The LZ4 frame magic number, little-endian.
const FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
/// FLG bit: the descriptor holds the content size (8 bytes).
const FLG_CONTENT_SIZE: u8 = 0x08;
/// FLG bit: the descriptor holds a dictionary id (4 bytes).
const FLG_DICTIONARY_ID: u8 = 0x01;
/// FLG bit: each block stands alone (Kafka's reader requires it).
const FLG_BLOCK_INDEPENDENCE: u8 = 0x20;

/// Decompresses LZ4 frames, fixing a magic-0 header checksum first when
/// `legacy_checksum` is set. A frame of dependent blocks is refused, as
/// Kafka's reader refuses it.
pub(super) fn decompress(
    data: &[u8],
    bound: &Bound,
    legacy_checksum: bool,
) -> Result<Vec<u8>, RecordsError> {
    if data.starts_with(&FRAME_MAGIC)
        && data
            .get(FRAME_MAGIC.len())
            .is_some_and(|flags| flags & FLG_BLOCK_INDEPENDENCE == 0)
    {
        return Err(RecordsError::Lz4DependentBlocks {
            offset: bound.offset(),
        });
    }
    // One decoder over a slice either way, so that it is compiled once.
    let fixed = legacy_checksum.then(|| fixed_frame(data)).flatten();
    read_bounded(FrameDecoder::new(fixed.as_deref().unwrap_or(data)), bound)
}

/// Compresses into one frame of independent 64 KiB blocks without block or
/// content checksums, as librdkafka writes.
pub(super) fn compress(data: &[u8]) -> Result<Vec<u8>, RecordsError> {
    let failed = |message: String| RecordsError::CompressionFailed {
        codec: Compression::Lz4,
        message,
    };
    let info = FrameInfo::new()
        .block_size(BlockSize::Max64KB)
        .block_mode(BlockMode::Independent)
        .block_checksums(false)
        .content_checksum(false);
    let mut encoder = FrameEncoder::with_frame_info(info, Vec::new());
    std::io::Write::write_all(&mut encoder, data).map_err(|e| failed(e.to_string()))?;
    encoder.finish().map_err(|e| failed(e.to_string()))
}

/// A copy of the frame with its header checksum byte recomputed as the
/// specification wants: xxHash32 (seed 0) of the descriptor, second byte.
/// `None` if `data` does not start with a complete frame header. (Only
/// magic 0 data, from Kafka before 0.10, needs it.)
fn fixed_frame(data: &[u8]) -> Option<Vec<u8>> {
    if !data.starts_with(&FRAME_MAGIC) {
        return None;
    }
    let flags = *data.get(4)?;
    let mut descriptor_len = 2;
    if flags & FLG_CONTENT_SIZE != 0 {
        descriptor_len += 8;
    }
    if flags & FLG_DICTIONARY_ID != 0 {
        descriptor_len += 4;
    }
    let checksum_at = FRAME_MAGIC.len() + descriptor_len;
    let descriptor = data.get(FRAME_MAGIC.len()..checksum_at)?;
    let checksum = (xxh32_short(descriptor) >> 8) as u8;
    let mut frame = data.to_vec();
    *frame.get_mut(checksum_at)? = checksum;
    Some(frame)
}

/// xxHash32 with seed 0 of an input shorter than 16 bytes (a frame
/// descriptor takes at most 14), which skips the algorithm's stripe loop.
fn xxh32_short(input: &[u8]) -> u32 {
    const PRIME1: u32 = 0x9E37_79B1;
    const PRIME2: u32 = 0x85EB_CA77;
    const PRIME3: u32 = 0xC2B2_AE3D;
    const PRIME4: u32 = 0x27D4_EB2F;
    const PRIME5: u32 = 0x1656_67B1;
    debug_assert!(input.len() < 16);

    let mut hash = PRIME5.wrapping_add(input.len() as u32);
    let mut words = input.chunks_exact(4);
    for word in &mut words {
        let word = u32::from_le_bytes(word.try_into().unwrap_or_default());
        hash = hash
            .wrapping_add(word.wrapping_mul(PRIME3))
            .rotate_left(17)
            .wrapping_mul(PRIME4);
    }
    for &byte in words.remainder() {
        hash = hash
            .wrapping_add(u32::from(byte).wrapping_mul(PRIME5))
            .rotate_left(11)
            .wrapping_mul(PRIME1);
    }
    hash ^= hash >> 15;
    hash = hash.wrapping_mul(PRIME2);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(PRIME3);
    hash ^ (hash >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_of_dependent_blocks_is_refused_as_kafka_refuses_it() {
        let data = b"dependent blocks ".repeat(10_000);
        let info = FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_mode(BlockMode::Linked);
        let mut encoder = FrameEncoder::with_frame_info(info, Vec::new());
        assert!(std::io::Write::write_all(&mut encoder, &data).is_ok());
        let linked = encoder.finish().unwrap_or_default();
        let bound = Bound::new(Compression::Lz4, 61, 1 << 20);
        assert_eq!(
            decompress(&linked, &bound, false),
            Err(RecordsError::Lz4DependentBlocks { offset: 61 })
        );
        let independent = compress(&data).unwrap_or_default();
        assert_eq!(decompress(&independent, &bound, false), Ok(data));
    }

    #[test]
    fn xxh32_known_answers() {
        // Published xxHash32 test vectors (seed 0).
        assert_eq!(xxh32_short(b""), 0x02CC_5D05);
        assert_eq!(xxh32_short(b"a"), 0x550D_7456);
        assert_eq!(xxh32_short(b"abc"), 0x32D1_53FF);
    }

    #[test]
    fn fixed_frame_keeps_a_correct_checksum() {
        for info in [FrameInfo::new(), FrameInfo::new().content_size(Some(5))] {
            let mut encoder = FrameEncoder::with_frame_info(info, Vec::new());
            std::io::Write::write_all(&mut encoder, b"hello").unwrap();
            let frame = encoder.finish().unwrap();
            assert_eq!(fixed_frame(&frame), Some(frame.clone()));
            // A header cut short, before or at its checksum byte, is not fixed.
            let checksum_at = FRAME_MAGIC.len()
                + if frame[4] & FLG_CONTENT_SIZE != 0 {
                    10
                } else {
                    2
                };
            assert_eq!(fixed_frame(&frame[..checksum_at]), None);
            assert_eq!(
                fixed_frame(&frame[..checksum_at + 1]).map(|f| f.len()),
                Some(checksum_at + 1)
            );
        }
    }

    #[test]
    fn broken_magic_zero_checksum_is_accepted() {
        let data = b"legacy kafka lz4".repeat(4);
        let mut frame = compress(&data).unwrap();
        // Kafka 0.8 hashed the magic number with the descriptor.
        let broken = xxh32_short(&frame[..6]);
        frame[6] = (broken >> 8) as u8;
        let bound = Bound::new(Compression::Lz4, 0, 1 << 20);
        assert!(decompress(&frame, &bound, false).is_err());
        assert_eq!(decompress(&frame, &bound, true).unwrap(), data);
    }
}
