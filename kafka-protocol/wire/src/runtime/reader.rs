//! A bounds-checked cursor over the input, with one method per wire type.
//!
//! Every read checks the bytes left before touching them, and every length or
//! count is checked against the bytes left before anything is allocated, so a
//! few hostile bytes can never make the decoder reserve gigabytes.

use super::error::{DecodeError, DecodeErrorKind};
use super::uuid::Uuid;
use super::varint::{
    get_uvarint, read_unsigned, unzigzag32, unzigzag64, uvarint_len, VarintError, MAX_VARINT_LEN,
    MAX_VARLONG_LEN,
};

/// A cursor over bytes that decoded values may borrow from.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    /// The whole input.
    pub(super) input: &'a [u8],
    /// The bytes not read yet: a suffix of `input`. Each read takes from
    /// its front, with one length check.
    pub(super) unread: &'a [u8],
    /// Offset of `input[0]` within the outermost input, for error offsets.
    pub(super) base: usize,
    /// False once something was read that encoding would not write back
    /// byte for byte (see [`Reader::is_canonical`]).
    pub(super) canonical: bool,
    /// Heap bytes that arrays of structs may still take as decoded `Vec`s;
    /// an array that does not fit is kept as checked wire bytes instead.
    pub(super) heap_budget: usize,
}

/// Heap a decode may spend on arrays of structs, beyond four bytes for each
/// input byte.
const HEAP_BUDGET_SLACK: usize = 64 * 1024;

/// How a decode reads its input: where the input lies in an outer one (for
/// the offsets in errors), and how much heap arrays of structs may take as
/// decoded `Vec`s. The default is what [`Reader::new`] gives.
///
/// Without heap ([`DecodeOptions::without_heap`]) a decode allocates
/// nothing however large its input: every array of structs stays checked
/// wire bytes, each element decoded when read. That suits a value read
/// once, such as one printed as JSON; a value read many times is faster
/// with `Vec`s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    base: usize,
    heap_budget: Option<usize>,
}

impl DecodeOptions {
    /// Offsets from the start of the input, and a heap budget of four times
    /// the input plus 64 KiB.
    pub const fn new() -> Self {
        DecodeOptions {
            base: 0,
            heap_budget: None,
        }
    }

    /// The input lies at offset `base` of an outer input: errors name
    /// offsets in that outer input.
    #[must_use]
    pub const fn with_base(self, base: usize) -> Self {
        DecodeOptions { base, ..self }
    }

    /// No heap for arrays of structs: every one stays checked wire bytes.
    #[must_use]
    pub const fn without_heap(self) -> Self {
        self.with_heap_budget(0)
    }

    /// `bytes` of heap for arrays of structs decoded into `Vec`s.
    #[must_use]
    pub const fn with_heap_budget(self, bytes: usize) -> Self {
        DecodeOptions {
            heap_budget: Some(bytes),
            ..self
        }
    }

    /// A reader at the start of `input`, with these options.
    #[inline]
    pub fn reader(self, input: &[u8]) -> Reader<'_> {
        Reader {
            input,
            unread: input,
            base: self.base,
            canonical: true,
            heap_budget: match self.heap_budget {
                Some(bytes) => bytes,
                None => input
                    .len()
                    .saturating_mul(4)
                    .saturating_add(HEAP_BUDGET_SLACK),
            },
        }
    }
}

impl<'a> Reader<'a> {
    /// A reader at the start of `input`. Arrays of structs it reads are
    /// decoded into `Vec`s while their total size stays within four times
    /// the input plus 64 KiB; past that, they are kept as checked wire bytes
    /// and decoded when read (see [`StructArray`](super::StructArray)).
    pub fn new(input: &'a [u8]) -> Self {
        DecodeOptions::new().reader(input)
    }

    /// A reader that allocates nothing: every array of structs it reads is
    /// checked and kept as wire bytes.
    pub fn without_heap(input: &'a [u8]) -> Self {
        DecodeOptions::new().without_heap().reader(input)
    }

    /// A reader at the start of `input`, which lies at offset `base` of an
    /// outer input: errors name offsets in that outer input.
    pub fn with_base(input: &'a [u8], base: usize) -> Self {
        DecodeOptions::new().with_base(base).reader(input)
    }

    /// True while everything read so far is in the one form the encoder
    /// writes, so that encoding the decoded values at the same version would
    /// give back the same bytes. Kafka accepts more: a bool byte other than
    /// 0 and 1, varints with redundant continuation bytes, null-marker bytes
    /// other than the ones written, tagged fields out of order. So does this
    /// reader, noting it here. A known tagged field also clears it, since the
    /// encoder leaves out one that holds its default value.
    #[inline]
    pub fn is_canonical(&self) -> bool {
        self.canonical
    }

    /// Notes that the input holds something the encoder would write
    /// differently.
    #[inline]
    pub fn mark_not_canonical(&mut self) {
        self.canonical = false;
    }

    /// The offset of the next byte, from the start of the outermost input.
    #[inline]
    pub fn offset(&self) -> usize {
        self.base + self.position()
    }

    /// The offset of the next byte within this reader's input.
    #[inline]
    pub(super) fn position(&self) -> usize {
        self.input.len() - self.unread.len()
    }

    /// Moves past `len` bytes that the caller checked are there.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn skip(&mut self, len: usize) {
        self.unread = self.unread.get(len..).unwrap_or_default();
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.unread.len()
    }

    /// True when every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The bytes not yet read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.unread
    }

    /// An error of `kind` at the current offset.
    ///
    /// In line, so that the reader's address is not passed to a function
    /// on any path: a reader whose address never escapes stays in registers
    /// while a struct is decoded. The error itself is built out of line
    /// ([`DecodeError::new`] is cold).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.offset(), kind)
    }

    /// Takes the next `len` bytes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        match self.unread.split_at_checked(len) {
            Some((taken, unread)) => {
                self.unread = unread;
                Ok(taken)
            }
            None => Err(self.error(DecodeErrorKind::Truncated {
                needed: len,
                remaining: self.unread.len(),
            })),
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.unread.split_first_chunk::<N>() {
            Some((chunk, unread)) => {
                self.unread = unread;
                Ok(*chunk)
            }
            None => Err(self.error(DecodeErrorKind::Truncated {
                needed: N,
                remaining: self.remaining(),
            })),
        }
    }

    /// Reads a bool: any non-zero byte is true, as Kafka reads it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        let byte = self.read_i8()?;
        if byte as u8 > 1 {
            self.canonical = false;
        }
        Ok(byte != 0)
    }

    /// Reads an int8.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        self.take_array().map(i8::from_be_bytes)
    }

    /// Reads a big-endian int16.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_i16(&mut self) -> Result<i16, DecodeError> {
        self.take_array().map(i16::from_be_bytes)
    }

    /// Reads a big-endian uint16.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        self.take_array().map(u16::from_be_bytes)
    }

    /// Reads a big-endian int32.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        self.take_array().map(i32::from_be_bytes)
    }

    /// Reads a big-endian uint32.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        self.take_array().map(u32::from_be_bytes)
    }

    /// Reads a big-endian int64.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        self.take_array().map(i64::from_be_bytes)
    }

    /// Reads a big-endian IEEE 754 double.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        self.take_array().map(f64::from_be_bytes)
    }

    /// Reads a 16-byte uuid.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_uuid(&mut self) -> Result<Uuid, DecodeError> {
        self.take_array().map(Uuid)
    }

    /// Reads an unsigned varint of at most five bytes.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_uvarint(&mut self) -> Result<u32, DecodeError> {
        // Almost every varint on the wire is one byte (a small length or
        // count) or two (the length of a records field under 16 KiB).
        match self.unread {
            [first, unread @ ..] if *first < 0x80 => {
                self.unread = unread;
                Ok(u32::from(*first))
            }
            [first, second, unread @ ..] if *second < 0x80 => {
                if *second == 0 {
                    // A redundant continuation byte.
                    self.canonical = false;
                }
                self.unread = unread;
                Ok(u32::from(first & 0x7f) | u32::from(*second) << 7)
            }
            _ => self.read_long_uvarint(),
        }
    }

    /// The varints of three bytes or more, and the faults, read out of line
    /// by [`long_uvarint`], which takes the bytes rather than the reader, so
    /// that the reader stays in registers.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn read_long_uvarint(&mut self) -> Result<u32, DecodeError> {
        let end_offset = self.base + self.input.len();
        let (value, unread, canonical) = long_uvarint(self.unread, end_offset)?;
        self.unread = unread;
        self.canonical &= canonical;
        Ok(value)
    }

    /// Reads a zigzag varint (`i32`), as v2 records hold them.
    #[inline]
    pub fn read_varint(&mut self) -> Result<i32, DecodeError> {
        self.read_unsigned(MAX_VARINT_LEN)
            .map(|raw| unzigzag32(raw as u32))
    }

    /// Reads a zigzag varlong (`i64`), as v2 records hold them.
    #[inline]
    pub fn read_varlong(&mut self) -> Result<i64, DecodeError> {
        self.read_unsigned(MAX_VARLONG_LEN).map(unzigzag64)
    }

    /// Reads an unsigned varint of at most `max_len` bytes, by the one rule
    /// of [`read_unsigned`].
    fn read_unsigned(&mut self, max_len: usize) -> Result<u64, DecodeError> {
        match read_unsigned(self.rest(), max_len) {
            Ok((value, len)) => {
                self.skip(len);
                Ok(value)
            }
            Err(fault) => Err(self.error(varint_fault(fault, self.remaining()))),
        }
    }

    /// Takes `len` bytes announced by a length prefix, failing with
    /// [`DecodeErrorKind::LengthExceedsInput`] when they are not there.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn take_announced(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        if len > self.remaining() {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                length: len as u64,
                remaining: self.remaining(),
            }));
        }
        self.take(len)
    }

    /// Fails unless every byte has been read.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.error(DecodeErrorKind::TrailingBytes(self.remaining())))
        }
    }
}

/// Reads an unsigned varint of at most five bytes from the front of
/// `unread`: the general case of [`Reader::read_uvarint`], compiled once.
/// Gives the value, the bytes after it, and whether it took the fewest
/// bytes. `end_offset` is the offset just past `unread`, for the error.
#[inline(never)]
fn long_uvarint(unread: &[u8], end_offset: usize) -> Result<(u32, &[u8], bool), DecodeError> {
    // Three bytes first: the length of a records field of 16 KiB to 2 MiB,
    // which Produce and Fetch carry one of per partition. The first two
    // bytes have their continuation bit set, or the fast paths would have
    // taken them.
    if let [first, second, third, rest @ ..] = unread {
        if *first >= 0x80 && *second >= 0x80 && *third < 0x80 {
            let value =
                u32::from(first & 0x7f) | u32::from(second & 0x7f) << 7 | u32::from(*third) << 14;
            return Ok((value, rest, *third != 0));
        }
    }
    match get_uvarint(unread) {
        Ok((value, len)) => Ok((
            value,
            unread.get(len..).unwrap_or_default(),
            len == uvarint_len(value),
        )),
        Err(fault) => {
            let remaining = unread.len();
            Err(DecodeError::new(
                end_offset - remaining,
                varint_fault(fault, remaining),
            ))
        }
    }
}

/// What went wrong with a varint that could not be read with `remaining`
/// bytes left.
fn varint_fault(fault: VarintError, remaining: usize) -> DecodeErrorKind {
    match fault {
        VarintError::Truncated => DecodeErrorKind::Truncated {
            needed: remaining + 1,
            remaining,
        },
        VarintError::TooLong => DecodeErrorKind::VarintTooLong,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three-byte path of the long uvarint agrees with the general
    /// reader on value, length, canonical form and faults, whatever the
    /// third byte.
    #[test]
    fn three_byte_uvarints_read_as_the_general_reader_reads_them() {
        for first in [0x80u8, 0x81, 0xc5, 0xff] {
            for second in [0x80u8, 0x80 | 0x2a, 0xff] {
                for third in 0..=u8::MAX {
                    let input = [first, second, third, 0x05, 0x00, 0xaa];
                    let mut reader = Reader::new(&input);
                    let read = reader.read_uvarint().ok();
                    let general = get_uvarint(&input).ok();
                    assert_eq!(read, general.map(|(value, _)| value), "{input:02x?}");
                    if let Some((value, len)) = general {
                        assert_eq!(reader.remaining(), input.len() - len, "{input:02x?}");
                        assert_eq!(
                            reader.is_canonical(),
                            len == uvarint_len(value),
                            "{input:02x?}"
                        );
                    }
                }
            }
        }
    }

    /// Every length of uvarint, through the one- and two-byte fast paths and
    /// the general one, with its value, length and canonical form.
    #[test]
    fn uvarints_of_every_length() {
        let cases: &[(&[u8], u32, bool)] = &[
            (&[0x00], 0, true),
            (&[0x7f], 127, true),
            (&[0x80, 0x01], 128, true),
            (&[0xff, 0x7f], 16_383, true),
            (&[0x81, 0x00], 1, false),
            (&[0x80, 0x80, 0x01], 16_384, true),
            (&[0x81, 0x80, 0x00], 1, false),
            (&[0xff, 0xff, 0x7f], 2_097_151, true),
            (&[0x80, 0x80, 0x80, 0x01], 2_097_152, true),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], u32::MAX, true),
        ];
        for &(bytes, value, canonical) in cases {
            let mut input = bytes.to_vec();
            input.push(0xaa); // a byte after the varint stays unread
            let mut reader = Reader::new(&input);
            assert_eq!(reader.read_uvarint().ok(), Some(value), "{bytes:02x?}");
            assert_eq!(reader.remaining(), 1, "{bytes:02x?}");
            assert_eq!(reader.is_canonical(), canonical, "{bytes:02x?}");
        }
        for bytes in [&[0x80][..], &[0xff, 0xff], &[]] {
            let error = Reader::new(bytes).read_uvarint().err();
            assert!(
                matches!(
                    error.as_ref().map(DecodeError::kind),
                    Some(DecodeErrorKind::Truncated { .. })
                ),
                "{bytes:02x?}: {error:?}"
            );
        }
        let too_long = [0xff, 0xff, 0xff, 0xff, 0x1f];
        let error = Reader::new(&too_long).read_uvarint().err();
        assert_eq!(
            error.as_ref().map(DecodeError::kind),
            Some(&DecodeErrorKind::VarintTooLong)
        );
    }
}
