//! Varints, the one home of their rules: the unsigned varints of compact
//! lengths and tagged fields, and the zigzag varints inside v2 records.
//!
//! Seven bits per byte, least significant group first, high bit set on every
//! byte but the last. A 32-bit value takes at most five bytes, a 64-bit one
//! at most ten. Zigzag maps signed values to unsigned ones so that small
//! magnitudes stay short: 0, -1, 1, -2, ... become 0, 1, 2, 3, ...
//!
//! # The rule for the last byte
//!
//! An encoding must fit its width. A varint whose 5th byte (a varlong's
//! 10th) has its continuation bit set is too long, exactly as Java's
//! `ByteUtils.readUnsignedVarint` (and `readUnsignedVarlong`) throw "Varint
//! is too long". Java also shifts the other bits of that last byte out of
//! the value without a word: a 5th byte above `0x0f` (a 10th above `0x01`)
//! silently loses them. No encoder writes such a byte (Java's own writer
//! emits `value >>> 28`, at most `0x0f`), and this crate never drops data
//! silently, so it refuses them too, as [`VarintError::TooLong`]. Every
//! encoding Java writes decodes to the same value here.

use std::fmt;

use bytes::BufMut;

/// The most bytes a 32-bit varint (unsigned, or zigzag `i32`) may take.
pub const MAX_VARINT_LEN: usize = 5;
/// The most bytes a 64-bit varint (unsigned, or zigzag `i64`) may take.
pub const MAX_VARLONG_LEN: usize = 10;

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The input ended inside the varint.
    Truncated,
    /// The varint continues past its maximum length, or its last byte holds
    /// bits past the value's width (see the module's rule for the last byte).
    TooLong,
}

impl fmt::Display for VarintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VarintError::Truncated => f.write_str("the input ends inside a varint"),
            VarintError::TooLong => f.write_str("a varint runs past its width"),
        }
    }
}

impl std::error::Error for VarintError {}

/// Reads an unsigned varint of at most `max_len` bytes ([`MAX_VARINT_LEN`]
/// for 32 bits, [`MAX_VARLONG_LEN`] for 64) from the front of `input`,
/// returning it with the number of bytes it took.
///
/// The last allowed byte may only hold the bits left of the width (see the
/// module's rule for the last byte): four for 32 bits, one for 64.
#[inline]
pub fn read_unsigned(input: &[u8], max_len: usize) -> Result<(u64, usize), VarintError> {
    let width: usize = if max_len <= MAX_VARINT_LEN { 32 } else { 64 };
    let last = max_len - 1;
    // Bits the last byte may carry: 32 - 28 = 4, or 64 - 63 = 1.
    let last_mask = (1u8 << (width - 7 * last)) - 1;
    let mut value = 0u64;
    for (index, &byte) in input.iter().enumerate() {
        if index > last || (index == last && byte & !last_mask != 0) {
            return Err(VarintError::TooLong);
        }
        // `index < 10`, so the shift stays below 64.
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return Ok((value, index + 1));
        }
    }
    if input.len() >= max_len {
        Err(VarintError::TooLong)
    } else {
        Err(VarintError::Truncated)
    }
}

/// Reads an unsigned 32-bit varint from the front of `input`, returning the
/// value and the number of bytes it took.
#[inline]
pub fn get_uvarint(input: &[u8]) -> Result<(u32, usize), VarintError> {
    // At most five bytes and 32 bits: the value fits.
    read_unsigned(input, MAX_VARINT_LEN).map(|(value, len)| (value as u32, len))
}

/// The number of bytes `value` takes as an unsigned varint.
#[inline]
pub fn uvarint_len(value: u32) -> usize {
    // Most values (lengths, counts, tags) take one byte.
    if value < 0x80 {
        return 1;
    }
    uvarlong_len(u64::from(value))
}

/// The number of bytes `value` takes as an unsigned 64-bit varint.
#[inline]
pub fn uvarlong_len(value: u64) -> usize {
    // One byte per started group of seven bits.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Writes `value` as an unsigned varint.
#[inline]
pub fn put_uvarint<B: BufMut + ?Sized>(buf: &mut B, value: u32) {
    put_uvarlong(buf, u64::from(value));
}

/// Writes `value` as an unsigned varint into `out`, returning how many of
/// its bytes it took, so that a writer can append them at once.
#[inline]
pub fn uvarint_to_bytes(value: u32, out: &mut [u8; MAX_VARINT_LEN]) -> usize {
    let mut rest = &mut out[..];
    // Five bytes hold any 32-bit varint, so the slice never runs out.
    put_uvarint(&mut rest, value);
    MAX_VARINT_LEN - rest.len()
}

/// Writes `value` as an unsigned 64-bit varint: the one varint writer.
#[inline]
pub fn put_uvarlong<B: BufMut + ?Sized>(buf: &mut B, mut value: u64) {
    while value >= 0x80 {
        buf.put_u8((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

/// The zigzag encoding of a 32-bit value.
#[inline]
pub fn zigzag32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

/// The zigzag encoding of a 64-bit value.
#[inline]
pub fn zigzag64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// Decodes the zigzag encoding of a 32-bit value.
#[inline]
pub fn unzigzag32(raw: u32) -> i32 {
    ((raw >> 1) as i32) ^ -((raw & 1) as i32)
}

/// Decodes the zigzag encoding of a 64-bit value.
#[inline]
pub fn unzigzag64(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

/// The number of bytes [`put_varint`] writes for `value`.
#[inline]
pub fn varint_len(value: i32) -> usize {
    uvarint_len(zigzag32(value))
}

/// The number of bytes [`put_varlong`] writes for `value`.
#[inline]
pub fn varlong_len(value: i64) -> usize {
    uvarlong_len(zigzag64(value))
}

/// Writes `value` as a zigzag varint.
#[inline]
pub fn put_varint<B: BufMut + ?Sized>(buf: &mut B, value: i32) {
    put_uvarint(buf, zigzag32(value));
}

/// Writes `value` as a zigzag varlong.
#[inline]
pub fn put_varlong<B: BufMut + ?Sized>(buf: &mut B, value: i64) {
    put_uvarlong(buf, zigzag64(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_round_trips_and_lengths() {
        for value in [0, 1, 127, 128, 16_383, 16_384, 0x0fff_ffff, u32::MAX] {
            let mut buf = Vec::new();
            put_uvarint(&mut buf, value);
            assert_eq!(buf.len(), uvarint_len(value), "{value}");
            assert_eq!(get_uvarint(&buf), Ok((value, buf.len())));
        }
        for value in [0, 1, 127, 128, 16_383, 16_384, 0x0fff_ffff, u32::MAX] {
            let mut bytes = [0; MAX_VARINT_LEN];
            let len = uvarint_to_bytes(value, &mut bytes);
            assert_eq!(len, uvarint_len(value), "{value}");
            assert_eq!(get_uvarint(&bytes[..len]), Ok((value, len)));
        }
        for value in [0, 1, 1 << 35, u64::MAX >> 1, u64::MAX] {
            let mut buf = Vec::new();
            put_uvarlong(&mut buf, value);
            assert_eq!(buf.len(), uvarlong_len(value), "{value}");
            assert_eq!(read_unsigned(&buf, MAX_VARLONG_LEN), Ok((value, buf.len())));
        }
    }

    #[test]
    fn rejects_overlong_and_reports_truncation() {
        let too_long = Err(VarintError::TooLong);
        assert_eq!(get_uvarint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), too_long);
        assert_eq!(get_uvarint(&[0xff, 0xff, 0xff, 0xff, 0x1f]), too_long);
        assert_eq!(get_uvarint(&[0x80, 0x80]), Err(VarintError::Truncated));
        assert_eq!(get_uvarint(&[]), Err(VarintError::Truncated));
    }

    /// The last byte may carry only the bits left of the width, for every
    /// value of that byte: four for 32 bits, one for 64.
    #[test]
    fn the_last_byte_fits_the_width() {
        for last in 0..=255u8 {
            let mut varint = vec![0xff; 4];
            varint.push(last);
            let accepted = read_unsigned(&varint, MAX_VARINT_LEN).is_ok();
            assert_eq!(accepted, last <= 0x0f, "5th byte {last:#04x}");
            let mut varlong = vec![0xff; 9];
            varlong.push(last);
            let accepted = read_unsigned(&varlong, MAX_VARLONG_LEN).is_ok();
            assert_eq!(accepted, last <= 0x01, "10th byte {last:#04x}");
        }
        assert_eq!(
            read_unsigned(&[0xff, 0xff, 0xff, 0xff, 0x0f], MAX_VARINT_LEN),
            Ok((u64::from(u32::MAX), 5))
        );
    }

    fn decode32(bytes: &[u8]) -> Result<(i32, usize), VarintError> {
        read_unsigned(bytes, MAX_VARINT_LEN).map(|(raw, len)| (unzigzag32(raw as u32), len))
    }

    #[test]
    fn zigzag_known_values() {
        // Values from the protobuf zigzag table.
        for (value, encoded) in [
            (0i32, &[0x00u8][..]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (-2, &[0x03]),
            (63, &[0x7e]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (i32::MAX, &[0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out, encoded, "encoding {value}");
            assert_eq!(varint_len(value), encoded.len());
            assert_eq!(decode32(encoded), Ok((value, encoded.len())));
        }
    }

    #[test]
    fn varlong_extremes_round_trip() {
        for value in [0i64, -1, 1, i64::MAX, i64::MIN, 1 << 40, -(1 << 40)] {
            let mut out = Vec::new();
            put_varlong(&mut out, value);
            assert_eq!(out.len(), varlong_len(value));
            let (raw, len) = read_unsigned(&out, MAX_VARLONG_LEN).unwrap();
            assert_eq!((unzigzag64(raw), len), (value, out.len()));
        }
    }

    #[test]
    fn over_long_and_truncated() {
        assert_eq!(decode32(&[0x80; 6]), Err(VarintError::TooLong));
        assert_eq!(
            decode32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
            Err(VarintError::TooLong)
        );
        assert_eq!(decode32(&[0x80, 0x80]), Err(VarintError::Truncated));
        assert_eq!(decode32(&[]), Err(VarintError::Truncated));
        assert_eq!(
            read_unsigned(&[0xff; 11], MAX_VARLONG_LEN),
            Err(VarintError::TooLong)
        );
    }

    #[test]
    fn the_last_byte_holds_only_the_bits_left_of_the_width() {
        // Java drops these bits silently; this crate refuses them.
        assert_eq!(
            decode32(&[0xff, 0xff, 0xff, 0xff, 0x1f]),
            Err(VarintError::TooLong)
        );
        assert_eq!(
            decode32(&[0x80, 0x80, 0x80, 0x80, 0x10]),
            Err(VarintError::TooLong)
        );
        let mut varlong = [0xffu8; 10];
        varlong[9] = 0x02;
        assert_eq!(
            read_unsigned(&varlong, MAX_VARLONG_LEN),
            Err(VarintError::TooLong)
        );
        varlong[9] = 0x01;
        assert_eq!(read_unsigned(&varlong, MAX_VARLONG_LEN), Ok((u64::MAX, 10)));
    }
}
