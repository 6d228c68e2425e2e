//! Zstandard, through `zstd-safe`'s bindings to the C library.

use zstd_safe::{CCtx, DCtx, DParameter, InBuffer, OutBuffer};

use super::bound::Bound;
use super::kind::Compression;
use crate::error::RecordsError;

/// Smallest window (log2) accepted whatever the limit: 8 MiB, the window
/// of every standard (non-"ultra") compression level.
const MIN_WINDOW_LOG: u32 = 23;
/// Largest window (log2) ever accepted: 128 MiB, zstd's default maximum.
const MAX_WINDOW_LOG: u32 = 27;
/// The output's first allocation, unless the limit is smaller; it doubles
/// from there.
const FIRST_OUTPUT: usize = 32 * 1024;
/// What the C library says of input that stops inside a frame.
const INCOMPLETE: &str = "incomplete frame";

/// Decompresses one or more concatenated zstd frames (skippable frames
/// included).
///
/// The decoder allocates its window up front from the frame header, so the
/// window it accepts is capped: the smallest power of two holding the limit,
/// kept between 8 MiB and 128 MiB. The output grows by doubling, never past
/// the limit; once it holds the limit, the decoder gets a one-byte buffer, and
/// any byte written there is past the limit.
pub(super) fn decompress(data: &[u8], bound: &Bound) -> Result<Vec<u8>, RecordsError> {
    let failed = |code: usize| bound.failed(zstd_safe::get_error_name(code));
    let mut decoder =
        DCtx::try_create().ok_or_else(|| bound.failed("cannot allocate a zstd decoder"))?;
    decoder
        .set_parameter(DParameter::WindowLogMax(window_log(bound.limit())))
        .map_err(failed)?;
    let mut input = InBuffer::around(data);
    let mut out = Vec::new();
    loop {
        let consumed = input.pos();
        let written = out.len();
        let room = bound.limit().saturating_sub(written);
        // `frame_left` is zero when a frame has just ended and all of it has
        // been written out.
        let (frame_left, out_full) = if room == 0 {
            let mut probe = [0u8; 1];
            let mut output = OutBuffer::around(&mut probe[..]);
            let frame_left = decoder
                .decompress_stream(&mut output, &mut input)
                .map_err(failed)?;
            if output.pos() > 0 {
                return Err(bound.exceeded());
            }
            (frame_left, false)
        } else {
            if out.len() == out.capacity() {
                out.reserve_exact(out.capacity().max(FIRST_OUTPUT).min(room));
            }
            let mut output = OutBuffer::around_pos(&mut out, written);
            let frame_left = decoder
                .decompress_stream(&mut output, &mut input)
                .map_err(failed)?;
            (frame_left, out.len() == out.capacity())
        };
        let input_left = input.pos() < data.len();
        if frame_left == 0 && !input_left {
            return Ok(out);
        }
        let progressed = input.pos() > consumed || out.len() > written;
        if !out_full && (!input_left || !progressed) {
            // The decoder wants input that is not there, or can use none of
            // what is: the data stops inside a frame.
            return Err(bound.failed(INCOMPLETE));
        }
    }
}

/// Compresses at zstd's default level, as one frame that records its
/// content size.
pub(super) fn compress(data: &[u8]) -> Result<Vec<u8>, RecordsError> {
    let failed = |message: &str| RecordsError::CompressionFailed {
        codec: Compression::Zstd,
        message: message.to_owned(),
    };
    let mut encoder = CCtx::try_create().ok_or_else(|| failed("cannot allocate a zstd encoder"))?;
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    encoder
        .compress(&mut out, data, zstd_safe::CLEVEL_DEFAULT)
        .map_err(|code| failed(zstd_safe::get_error_name(code)))?;
    Ok(out)
}

/// log2 of the smallest power of two at least `limit`, clamped.
fn window_log(limit: usize) -> u32 {
    let log = usize::BITS - limit.saturating_sub(1).leading_zeros();
    log.clamp(MIN_WINDOW_LOG, MAX_WINDOW_LOG)
}

#[cfg(test)]
mod tests {
    use super::{compress, decompress, window_log, FIRST_OUTPUT, INCOMPLETE};
    use crate::compression::bound::Bound;
    use crate::compression::kind::Compression;
    use crate::error::RecordsError;

    fn bound(limit: usize) -> Bound {
        Bound::new(Compression::Zstd, 5, limit)
    }

    fn incomplete() -> RecordsError {
        bound(0).failed(INCOMPLETE)
    }

    /// A skippable frame (magic 0x184D2A50) of three bytes.
    const SKIPPABLE: [u8; 11] = [0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];

    #[test]
    fn window_follows_limit_within_bounds() {
        assert_eq!(window_log(1), 23);
        assert_eq!(window_log(64 << 20), 26);
        assert_eq!(window_log((64 << 20) + 1), 27);
        assert_eq!(window_log(usize::MAX), 27);
    }

    #[test]
    fn output_of_exactly_the_limit_is_accepted_and_one_byte_more_is_not() {
        let text = b"twenty-three bytes long";
        let frame = compress(text).unwrap();
        assert_eq!(decompress(&frame, &bound(23)).unwrap(), text);
        assert_eq!(decompress(&frame, &bound(22)), Err(bound(22).exceeded()));
        assert_eq!(decompress(&frame, &bound(0)), Err(bound(0).exceeded()));
    }

    #[test]
    fn concatenated_and_skippable_frames_are_read_to_the_end() {
        let first = compress(b"first ").unwrap();
        let second = compress(&[7u8; 100_000]).unwrap();
        let data = [&SKIPPABLE[..], &first, &SKIPPABLE, &second].concat();
        let out = decompress(&data, &bound(200_000)).unwrap();
        assert_eq!(out.len(), 100_006);
        assert_eq!(&out[..6], b"first ");
        assert!(out[6..].iter().all(|&byte| byte == 7));
        assert_eq!(
            decompress(&data, &bound(100_005)),
            Err(bound(100_005).exceeded())
        );
        assert_eq!(decompress(&SKIPPABLE, &bound(10)).unwrap(), b"");
    }

    #[test]
    fn input_that_stops_inside_a_frame_is_incomplete() {
        let frame = compress(&[1u8; 1000]).unwrap();
        assert_eq!(decompress(&[], &bound(10)), Err(incomplete()));
        for cut in [1, 4, frame.len() / 2, frame.len() - 1] {
            assert_eq!(
                decompress(&frame[..cut], &bound(10_000)),
                Err(incomplete()),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn corrupt_input_names_the_library_s_error() {
        let failed = |message: &str| Err(bound(0).failed(message));
        assert_eq!(
            decompress(&[1, 2, 3, 4, 5, 6, 7, 8], &bound(100)),
            failed("Unknown frame descriptor")
        );
        let trailing = [compress(b"data").unwrap(), vec![0]].concat();
        assert_eq!(
            decompress(&trailing, &bound(100)),
            failed("Unknown frame descriptor")
        );
    }

    #[test]
    fn the_output_never_holds_more_than_the_limit() {
        let whole = 1 << 20;
        let frame = compress(&vec![3u8; whole]).unwrap();
        let out = decompress(&frame, &bound(whole)).unwrap();
        assert_eq!(out.len(), whole);
        assert!(out.capacity() <= whole, "{}", out.capacity());
        for limit in [1, 1000, FIRST_OUTPUT, 3 * FIRST_OUTPUT + 1, whole - 1] {
            assert_eq!(
                decompress(&frame, &bound(limit)),
                Err(bound(limit).exceeded())
            );
        }
    }
}
