//! Zigzag varints, as used inside v2 records.
//!
//! These are the signed (zigzag) varints of `DefaultRecord`, not the unsigned
//! varints of flexible request versions. A varint (`i32`) takes at most 5
//! bytes and a varlong (`i64`) at most 10; longer encodings are rejected, as
//! the Java client does. Bits past the 32nd (64th) are dropped, also as the
//! Java client does.

use bytes::BufMut;

/// Most bytes a zigzag varint (`i32`) may take.
pub(crate) const MAX_VARINT_LEN: usize = 5;
/// Most bytes a zigzag varlong (`i64`) may take.
pub(crate) const MAX_VARLONG_LEN: usize = 10;

/// Why an unsigned varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarintError {
    /// The input ended inside the varint.
    Truncated,
    /// The varint continues past its maximum length.
    TooLong,
}

/// Reads an unsigned LEB128 value of at most `max_len` bytes from the start of
/// `buf`, returning it with the number of bytes it took.
pub(crate) fn read_unsigned(buf: &[u8], max_len: usize) -> Result<(u64, usize), VarintError> {
    let mut value = 0u64;
    for (index, &byte) in buf.iter().enumerate() {
        if index >= max_len {
            return Err(VarintError::TooLong);
        }
        // `index < 10`, so the shift stays below 64; high bits of the last
        // byte fall off the end as in Java's `readVarlong`.
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return Ok((value, index + 1));
        }
    }
    if buf.len() >= max_len {
        Err(VarintError::TooLong)
    } else {
        Err(VarintError::Truncated)
    }
}

/// Decodes the zigzag encoding of a 32-bit value.
pub(crate) fn unzigzag32(raw: u64) -> i32 {
    // Truncation to 32 bits is intended (Java semantics).
    let raw = raw as u32;
    ((raw >> 1) as i32) ^ -((raw & 1) as i32)
}

/// Decodes the zigzag encoding of a 64-bit value.
pub(crate) fn unzigzag64(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

/// Number of bytes [`put_varint`] writes for `value`.
pub(crate) fn varint_len(value: i32) -> usize {
    unsigned_len(u64::from(zigzag32(value)))
}

/// Number of bytes [`put_varlong`] writes for `value`.
pub(crate) fn varlong_len(value: i64) -> usize {
    unsigned_len(zigzag64(value))
}

/// Writes `value` as a zigzag varint.
pub(crate) fn put_varint<B: BufMut + ?Sized>(buf: &mut B, value: i32) {
    put_unsigned(buf, u64::from(zigzag32(value)));
}

/// Writes `value` as a zigzag varlong.
pub(crate) fn put_varlong<B: BufMut + ?Sized>(buf: &mut B, value: i64) {
    put_unsigned(buf, zigzag64(value));
}

fn zigzag32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

fn zigzag64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unsigned_len(mut value: u64) -> usize {
    let mut len = 1;
    while value >= 0x80 {
        value >>= 7;
        len += 1;
    }
    len
}

fn put_unsigned<B: BufMut + ?Sized>(buf: &mut B, mut value: u64) {
    while value >= 0x80 {
        buf.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode32(bytes: &[u8]) -> Result<(i32, usize), VarintError> {
        read_unsigned(bytes, MAX_VARINT_LEN).map(|(raw, len)| (unzigzag32(raw), len))
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
}
