//! Unsigned varints, as used by compact lengths and tagged fields.
//!
//! Seven bits per byte, least significant group first, high bit set on every
//! byte but the last. A 32-bit value takes at most five bytes.

use bytes::BufMut;

/// The most bytes an unsigned 32-bit varint may take.
pub const MAX_UVARINT_LEN: usize = 5;

/// The number of bytes `value` takes as an unsigned varint.
#[inline]
pub fn uvarint_len(value: u32) -> usize {
    // Most values (lengths, counts, tags) take one byte.
    if value < 0x80 {
        return 1;
    }
    // One byte per started group of seven bits.
    let bits = 32 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Writes `value` as an unsigned varint.
#[inline]
pub fn put_uvarint<B: BufMut>(buf: &mut B, mut value: u32) {
    while value >= 0x80 {
        buf.put_u8((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

/// Reads an unsigned varint from the front of `input`.
///
/// Returns the value and the number of bytes it took, `Ok(None)` when the
/// input ends first, or `Err(())` when it runs past five bytes or 32 bits.
///
/// The rule for the fifth byte is shared with the record decoder (see
/// `records::varint`): a continuation bit there is an error, as in Java's
/// `ByteUtils.readUnsignedVarint`, and so is any bit above `0x0f`, which
/// Java would drop silently.
#[inline]
#[allow(clippy::result_unit_err)]
pub fn get_uvarint(input: &[u8]) -> Result<Option<(u32, usize)>, ()> {
    let mut value: u32 = 0;
    for (i, byte) in input.iter().take(MAX_UVARINT_LEN).enumerate() {
        let group = u32::from(byte & 0x7f);
        if i == MAX_UVARINT_LEN - 1 && group > 0x0f {
            return Err(());
        }
        value |= group << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if input.len() >= MAX_UVARINT_LEN {
        Err(())
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_lengths() {
        for value in [0, 1, 127, 128, 16_383, 16_384, 0x0fff_ffff, u32::MAX] {
            let mut buf = Vec::new();
            put_uvarint(&mut buf, value);
            assert_eq!(buf.len(), uvarint_len(value), "{value}");
            assert_eq!(get_uvarint(&buf), Ok(Some((value, buf.len()))));
        }
    }

    #[test]
    fn rejects_overlong_and_reports_truncation() {
        assert_eq!(get_uvarint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), Err(()));
        assert_eq!(get_uvarint(&[0xff, 0xff, 0xff, 0xff, 0x1f]), Err(()));
        assert_eq!(get_uvarint(&[0x80, 0x80]), Ok(None));
        assert_eq!(get_uvarint(&[]), Ok(None));
    }
}
