//! Zigzag varints, as used inside v2 records.
//!
//! These are the signed (zigzag) varints of `DefaultRecord`, not the unsigned
//! varints of flexible request versions (`runtime::varint`). A varint (`i32`)
//! takes at most 5 bytes and a varlong (`i64`) at most 10.
//!
//! # The rule for the last byte
//!
//! One rule for every varint this crate reads, here and in
//! [`kafka_wire::runtime::varint::get_uvarint`]: an encoding must fit its width.
//! A varint whose 5th byte (a varlong's 10th) has its continuation bit set
//! is too long, exactly as Java's `ByteUtils.readUnsignedVarint` (and
//! `readUnsignedVarlong`) throw "Varint is too long". Java also shifts the
//! other bits of that last byte out of the value without a word: a 5th byte
//! above `0x0f` (a 10th above `0x01`) silently loses them. No encoder writes
//! such a byte (Java's own writer emits `value >>> 28`, at most `0x0f`), and
//! this crate never drops data silently, so it refuses them too, as
//! [`RecordsError::VarintTooLong`](super::RecordsError::VarintTooLong).
//! Every encoding Java writes decodes to the same value here.

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
    /// The varint continues past its maximum length, or its last byte holds
    /// bits past the value's width.
    TooLong,
}

/// Reads an unsigned LEB128 value of at most `max_len` bytes
/// ([`MAX_VARINT_LEN`] for 32 bits or [`MAX_VARLONG_LEN`] for 64) from the
/// start of `buf`, returning it with the number of bytes it took.
///
/// The last allowed byte may only hold the bits left of the width (see the
/// module documentation): four for a varint, one for a varlong.
pub(crate) fn read_unsigned(buf: &[u8], max_len: usize) -> Result<(u64, usize), VarintError> {
    let width: usize = if max_len <= MAX_VARINT_LEN { 32 } else { 64 };
    let last = max_len - 1;
    // Bits the last byte may carry: 32 - 28 = 4, or 64 - 63 = 1.
    let last_mask = (1u8 << (width - 7 * last)) - 1;
    let mut value = 0u64;
    for (index, &byte) in buf.iter().enumerate() {
        if index > last || (index == last && byte & !last_mask != 0) {
            return Err(VarintError::TooLong);
        }
        // `index < 10`, so the shift stays below 64.
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
    // `read_unsigned` with `MAX_VARINT_LEN` gives at most 32 bits.
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

    /// The records decoder and the runtime decoder apply one rule: for every
    /// value of the 5th byte, after four continuation bytes of each kind,
    /// both accept with the same value or both refuse.
    #[test]
    fn agrees_with_the_runtime_unsigned_varint() {
        use kafka_wire::runtime::varint::get_uvarint;
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for prefix in [[0x80u8; 4], [0xff; 4], [0xaa, 0xd5, 0x80, 0xff]] {
            for last in 0..=255u8 {
                let mut input = prefix.to_vec();
                input.push(last);
                inputs.push(input);
            }
        }
        for value in [0u32, 1, 127, 128, 0x0fff_ffff, 0x1000_0000, u32::MAX] {
            let mut input = Vec::new();
            kafka_wire::runtime::varint::put_uvarint(&mut input, value);
            inputs.push(input);
        }
        for input in inputs {
            let records = read_unsigned(&input, MAX_VARINT_LEN).ok();
            let runtime = get_uvarint(&input).ok().flatten();
            assert_eq!(
                records,
                runtime.map(|(value, len)| (u64::from(value), len)),
                "{input:02x?}"
            );
        }
    }
}
