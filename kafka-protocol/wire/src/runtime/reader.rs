//! A bounds-checked cursor over the input, with one method per wire type.
//!
//! Every read checks the bytes left before touching them, and every length or
//! count is checked against the bytes left before anything is allocated, so a
//! few hostile bytes can never make the decoder reserve gigabytes.

use std::borrow::Cow;
#[cfg(debug_assertions)]
use std::cell::Cell;

use super::array::{FixedWidth, ScalarArray};
use super::codec::Decode;
use super::error::{DecodeError, DecodeErrorKind};
use super::struct_array::StructArray;
use super::tagged::UnknownTaggedFields;
use super::uuid::Uuid;
use super::varint::{get_uvarint, put_uvarint, uvarint_len};

/// The most memory reserved up front for an array, in bytes. A count is
/// checked against the bytes left, but an element can be much larger in
/// memory than on the wire, so a larger array grows as its elements decode
/// instead of being reserved whole on a peer's word.
const MAX_UPFRONT_RESERVATION: usize = 64 * 1024;

/// The capacity to reserve for an array of `count` elements of `T`.
#[inline(always)]
fn initial_capacity<T>(count: usize) -> usize {
    count.min(MAX_UPFRONT_RESERVATION / std::mem::size_of::<T>().max(1))
}

#[cfg(debug_assertions)]
thread_local! {
    /// Set while the debug self-check re-decodes an element, so that the
    /// arrays nested in it are not checked once more per level.
    static RECHECKING: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as re-decoding for the debug self-check until dropped,
/// even if the decode unwinds.
#[cfg(debug_assertions)]
struct Rechecking;

#[cfg(debug_assertions)]
impl Rechecking {
    fn start() -> Self {
        RECHECKING.with(|flag| flag.set(true));
        Rechecking
    }
}

#[cfg(debug_assertions)]
impl Drop for Rechecking {
    fn drop(&mut self) {
        RECHECKING.with(|flag| flag.set(false));
    }
}

/// What reading a tagged-field section found, to keep its unknown fields.
struct TaggedSection {
    /// Where the first field starts (after the count).
    fields_start: usize,
    /// Where the section ends.
    end: usize,
    /// How many fields `known` did not take.
    unknown_count: usize,
    /// Their size with shortest uvarints.
    unknown_len: usize,
    /// Where the first of them starts.
    unknown_start: Option<usize>,
    /// Where the last of them ends.
    unknown_end: usize,
    /// True when the unknown fields can be borrowed as they are: next to
    /// each other, in ascending tag order, with shortest uvarints.
    borrowable: bool,
    /// The known tags below 64 that were present, as bits.
    known_low: u64,
    /// The known tags of 64 or more that were present (rare, and no more
    /// than the struct has known tagged fields).
    known_high: Vec<u32>,
}

impl TaggedSection {
    fn mark_known(&mut self, tag: u32) {
        if tag < 64 {
            self.known_low |= 1 << tag;
        } else {
            self.known_high.push(tag);
        }
    }

    fn is_known(&self, tag: u32) -> bool {
        if tag < 64 {
            self.known_low & (1 << tag) != 0
        } else {
            self.known_high.contains(&tag)
        }
    }
}

/// A cursor over bytes that decoded values may borrow from.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    input: &'a [u8],
    position: usize,
    /// Offset of `input[0]` within the outermost input, for error offsets.
    base: usize,
    /// False once something was read that encoding would not write back
    /// byte for byte (see [`Reader::is_canonical`]).
    canonical: bool,
    /// Heap bytes that arrays of structs may still take as decoded `Vec`s;
    /// an array that does not fit is kept as checked wire bytes instead.
    heap_budget: usize,
}

/// Heap a decode may spend on arrays of structs, beyond four bytes for each
/// input byte.
const HEAP_BUDGET_SLACK: usize = 64 * 1024;

impl<'a> Reader<'a> {
    /// A reader at the start of `input`. Arrays of structs it reads are
    /// decoded into `Vec`s while their total size stays within four times
    /// the input plus 64 KiB; past that, they are kept as checked wire bytes
    /// and decoded when read (see [`StructArray`]).
    pub fn new(input: &'a [u8]) -> Self {
        Reader {
            input,
            position: 0,
            base: 0,
            canonical: true,
            heap_budget: input
                .len()
                .saturating_mul(4)
                .saturating_add(HEAP_BUDGET_SLACK),
        }
    }

    /// A reader that allocates nothing: every array of structs it reads is
    /// checked and kept as wire bytes.
    pub fn without_heap(input: &'a [u8]) -> Self {
        Reader {
            heap_budget: 0,
            ..Reader::new(input)
        }
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
        self.base + self.position
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.input.len() - self.position
    }

    /// True when every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The bytes not yet read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.input[self.position..]
    }

    /// An error of `kind` at the current offset.
    #[cold]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.offset(), kind)
    }

    /// Takes the next `len` bytes.
    #[inline(always)]
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let rest = self.rest();
        if len > rest.len() {
            return Err(self.error(DecodeErrorKind::Truncated {
                needed: len,
                remaining: rest.len(),
            }));
        }
        self.position += len;
        Ok(&rest[..len])
    }

    #[inline(always)]
    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.rest().first_chunk::<N>() {
            Some(chunk) => {
                self.position += N;
                Ok(*chunk)
            }
            None => Err(self.error(DecodeErrorKind::Truncated {
                needed: N,
                remaining: self.remaining(),
            })),
        }
    }

    /// Reads a bool: any non-zero byte is true, as Kafka reads it.
    #[inline(always)]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        let byte = self.read_i8()?;
        if byte as u8 > 1 {
            self.canonical = false;
        }
        Ok(byte != 0)
    }

    /// Reads an int8.
    #[inline(always)]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        self.take_array().map(i8::from_be_bytes)
    }

    /// Reads a big-endian int16.
    #[inline(always)]
    pub fn read_i16(&mut self) -> Result<i16, DecodeError> {
        self.take_array().map(i16::from_be_bytes)
    }

    /// Reads a big-endian uint16.
    #[inline(always)]
    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        self.take_array().map(u16::from_be_bytes)
    }

    /// Reads a big-endian int32.
    #[inline(always)]
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        self.take_array().map(i32::from_be_bytes)
    }

    /// Reads a big-endian uint32.
    #[inline(always)]
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        self.take_array().map(u32::from_be_bytes)
    }

    /// Reads a big-endian int64.
    #[inline(always)]
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        self.take_array().map(i64::from_be_bytes)
    }

    /// Reads a big-endian IEEE 754 double.
    #[inline(always)]
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        self.take_array().map(f64::from_be_bytes)
    }

    /// Reads a 16-byte uuid.
    #[inline(always)]
    pub fn read_uuid(&mut self) -> Result<Uuid, DecodeError> {
        self.take_array().map(Uuid)
    }

    /// Reads an unsigned varint of at most five bytes.
    #[inline(always)]
    pub fn read_uvarint(&mut self) -> Result<u32, DecodeError> {
        // Almost every varint on the wire is one byte (a small length or
        // count) or two (the length of a records field under 16 KiB).
        match self.rest() {
            [first, ..] if *first < 0x80 => {
                self.position += 1;
                Ok(u32::from(*first))
            }
            [first, second, ..] if *second < 0x80 => {
                if *second == 0 {
                    // A redundant continuation byte.
                    self.canonical = false;
                }
                self.position += 2;
                Ok(u32::from(first & 0x7f) | u32::from(*second) << 7)
            }
            _ => self.read_long_uvarint(),
        }
    }

    #[inline(never)]
    fn read_long_uvarint(&mut self) -> Result<u32, DecodeError> {
        match get_uvarint(self.rest()) {
            Ok(Some((value, len))) => {
                if len > uvarint_len(value) {
                    self.canonical = false;
                }
                self.position += len;
                Ok(value)
            }
            Ok(None) => Err(self.error(DecodeErrorKind::Truncated {
                needed: self.remaining() + 1,
                remaining: self.remaining(),
            })),
            Err(()) => Err(self.error(DecodeErrorKind::VarintTooLong)),
        }
    }

    /// Reads a length prefix: compact (`uvarint(len + 1)`, 0 = null) or
    /// classic (`int16` or `int32`, -1 = null). Returns `None` for null.
    #[inline(always)]
    fn read_length(&mut self, compact: bool, wide: bool) -> Result<Option<usize>, DecodeError> {
        if compact {
            return Ok(self.read_uvarint()?.checked_sub(1).map(|len| len as usize));
        }
        let start = self.offset();
        let length: i32 = if wide {
            self.read_i32()?
        } else {
            i32::from(self.read_i16()?)
        };
        match length {
            -1 => Ok(None),
            n if n < 0 => Err(DecodeError::new(
                start,
                DecodeErrorKind::InvalidLength(n.into()),
            )),
            n => Ok(Some(n as usize)),
        }
    }

    /// Takes `len` bytes announced by a length prefix, failing with
    /// [`DecodeErrorKind::LengthExceedsInput`] when they are not there.
    #[inline(always)]
    fn take_announced(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        if len > self.remaining() {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                length: len as u64,
                remaining: self.remaining(),
            }));
        }
        self.take(len)
    }

    /// Reads a string that may be null.
    #[inline(always)]
    pub fn read_nullable_string(
        &mut self,
        compact: bool,
    ) -> Result<Option<Cow<'a, str>>, DecodeError> {
        let Some(len) = self.read_length(compact, false)? else {
            return Ok(None);
        };
        if len > i16::MAX as usize {
            return Err(self.error(DecodeErrorKind::StringTooLong(len)));
        }
        let start = self.offset();
        let bytes = self.take_announced(len)?;
        match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some(Cow::Borrowed(text))),
            Err(e) => Err(DecodeError::new(
                start + e.valid_up_to(),
                DecodeErrorKind::InvalidUtf8 {
                    valid_up_to: e.valid_up_to(),
                },
            )),
        }
    }

    /// Reads a string that must not be null.
    #[inline(always)]
    pub fn read_string(&mut self, compact: bool) -> Result<Cow<'a, str>, DecodeError> {
        let start = self.offset();
        self.read_nullable_string(compact)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads bytes (or records) that may be null.
    #[inline(always)]
    pub fn read_nullable_bytes(
        &mut self,
        compact: bool,
    ) -> Result<Option<Cow<'a, [u8]>>, DecodeError> {
        match self.read_length(compact, true)? {
            None => Ok(None),
            Some(len) => self.take_announced(len).map(|b| Some(Cow::Borrowed(b))),
        }
    }

    /// Reads bytes that must not be null.
    #[inline(always)]
    pub fn read_bytes(&mut self, compact: bool) -> Result<Cow<'a, [u8]>, DecodeError> {
        let start = self.offset();
        self.read_nullable_bytes(compact)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads an array's element count, `None` for null. The count is checked
    /// against the bytes left, assuming every element takes at least
    /// `min_element_len` bytes (at least one), before anything is allocated.
    #[inline(always)]
    pub fn read_array_len(
        &mut self,
        compact: bool,
        min_element_len: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let Some(count) = self.read_length(compact, true)? else {
            return Ok(None);
        };
        let needed = count.saturating_mul(min_element_len.max(1));
        if needed > self.remaining() {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                length: count as u64,
                remaining: self.remaining(),
            }));
        }
        Ok(Some(count))
    }

    /// Reads an array that may be null, decoding each element with `element`.
    /// Element errors are located by index.
    #[inline]
    pub fn read_nullable_array<T>(
        &mut self,
        compact: bool,
        mut element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        let Some(count) = self.read_array_len(compact, 1)? else {
            return Ok(None);
        };
        let mut items = Vec::with_capacity(initial_capacity::<T>(count));
        for index in 0..count {
            match element(self) {
                Ok(item) => items.push(item),
                Err(e) => return Err(e.at_index(index)),
            }
        }
        Ok(Some(items))
    }

    /// Reads an array that must not be null.
    #[inline]
    pub fn read_array<T>(
        &mut self,
        compact: bool,
        element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let start = self.offset();
        self.read_nullable_array(compact, element)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads an array of structs that may be null. Two or more elements that
    /// hold arrays of structs themselves ([`Decode::HOLDS_STRUCT_ARRAYS`])
    /// are decoded into a `Vec` when the heap budget allows (see
    /// [`Reader::new`]);
    /// otherwise each element is checked with [`Decode::validate_from`] and
    /// the array keeps only the checked bytes, which [`StructArray::iter`]
    /// decodes. Either way a fault anywhere is reported now, with its index.
    #[inline]
    pub fn read_nullable_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<Option<StructArray<'a, T>>, DecodeError> {
        let Some(count) = self.read_array_len(compact, 1)? else {
            return Ok(None);
        };
        let start = self.position;
        let canonical_before = std::mem::replace(&mut self.canonical, true);
        let items =
            if self.take_heap_for_vec(T::HOLDS_STRUCT_ARRAYS, count, std::mem::size_of::<T>()) {
                Some(self.decode_elements::<T>(count, version)?)
            } else {
                self.validate_elements::<T>(count, version)?;
                None
            };
        let (bytes, canonical) = self.end_struct_array(start, canonical_before);
        Ok(Some(match items {
            Some(items) => {
                #[cfg(debug_assertions)]
                self.debug_check_validates::<T>(start, count, version, canonical);
                StructArray::from_decoded_wire(items, bytes, version, canonical)
            }
            // A count fits in 32 bits: it came from an int32 or a uvarint.
            None => StructArray::from_checked_wire(
                bytes,
                u32::try_from(count).unwrap_or(u32::MAX),
                version,
                canonical,
            ),
        }))
    }

    /// Checks an array of structs (null allowed when `nullable`) and builds
    /// nothing, for `validate_from`: it accepts and rejects exactly what
    /// [`Reader::read_nullable_struct_array`] and [`Reader::read_struct_array`]
    /// do, with the same errors, without an array to return and drop.
    #[inline]
    pub fn skip_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        nullable: bool,
        version: i16,
    ) -> Result<(), DecodeError> {
        let start = self.offset();
        match self.read_array_len(compact, 1)? {
            Some(count) => self.validate_elements::<T>(count, version),
            None if nullable => Ok(()),
            None => Err(DecodeError::new(start, DecodeErrorKind::UnexpectedNull)),
        }
    }

    /// Whether an array of `count` elements of `element_size` bytes each is
    /// decoded into a `Vec`, taking that much of the heap budget if so: when
    /// its elements hold arrays of structs, there are two or more of them (a
    /// single element is worth no allocation: reading it checks its nested
    /// arrays once more, once), and the budget has room.
    fn take_heap_for_vec(&mut self, holds_arrays: bool, count: usize, element_size: usize) -> bool {
        let heap = count.saturating_mul(element_size);
        let fits = holds_arrays && count > 1 && heap <= self.heap_budget;
        if fits {
            self.heap_budget -= heap;
        }
        fits
    }

    /// Ends an array of structs that started at `start`: its bytes, and
    /// whether they were canonical; the reader is canonical from here when
    /// it was before the array and the array is.
    fn end_struct_array(&mut self, start: usize, canonical_before: bool) -> (&'a [u8], bool) {
        let canonical = self.canonical;
        self.canonical = canonical_before && canonical;
        (&self.input[start..self.position], canonical)
    }

    /// Decodes `count` elements into a `Vec` of exactly that capacity.
    #[inline]
    fn decode_elements<T: Decode<'a>>(
        &mut self,
        count: usize,
        version: i16,
    ) -> Result<Vec<T>, DecodeError> {
        let mut items = Vec::with_capacity(count);
        for index in 0..count {
            match T::decode_from(self, version) {
                Ok(item) => items.push(item),
                Err(e) => return Err(e.at_index(index)),
            }
        }
        Ok(items)
    }

    /// Checks `count` elements, building nothing: arrays nested in them are
    /// kept as wire bytes too, whatever budget is left.
    fn validate_elements<T: Decode<'a>>(
        &mut self,
        count: usize,
        version: i16,
    ) -> Result<(), DecodeError> {
        let budget = std::mem::take(&mut self.heap_budget);
        let mut result = Ok(());
        for index in 0..count {
            #[cfg(debug_assertions)]
            let element_start = self.position;
            if let Err(e) = T::validate_from(self, version) {
                result = Err(e.at_index(index));
                break;
            }
            #[cfg(debug_assertions)]
            self.debug_check_decodes::<T>(element_start, version);
        }
        self.heap_budget = budget;
        result
    }

    /// A fresh reader over the same input at `position`, allocating nothing,
    /// for the debug self-checks to read bytes again.
    #[cfg(debug_assertions)]
    fn rechecker(&self, position: usize) -> Reader<'a> {
        Reader {
            input: self.input,
            position,
            base: self.base,
            canonical: true,
            heap_budget: 0,
        }
    }

    /// In debug builds (and so in every test), checks that what decoding
    /// just accepted, `validate_from` accepts too, ending at the same byte
    /// and finding the same bytes canonical: the promise `Message::validate`
    /// and arrays kept as wire bytes rely on.
    #[cfg(debug_assertions)]
    fn debug_check_validates<T: Decode<'a>>(
        &self,
        start: usize,
        count: usize,
        version: i16,
        canonical: bool,
    ) {
        if RECHECKING.with(Cell::get) {
            return;
        }
        let mut again = self.rechecker(start);
        let validated = {
            let _rechecking = Rechecking::start();
            (0..count).try_for_each(|_| T::validate_from(&mut again, version))
        };
        debug_assert!(
            validated.is_ok() && again.position == self.position && again.canonical == canonical,
            "decode_from and validate_from disagree at offset {}: {:?}, {} bytes against {}, \
             canonical {} against {}",
            self.base + start,
            validated.err(),
            again.position - start,
            self.position - start,
            again.canonical,
            canonical,
        );
    }

    /// In debug builds (and so in every test), checks the promise iteration
    /// relies on: what `validate_from` accepted, `decode_from` decodes, using the
    /// same bytes.
    ///
    /// Arrays nested inside the element are not checked again while it is
    /// re-decoded: each was checked when its own enclosing element was
    /// validated, and checking them once per enclosing level would cost
    /// 2^depth decodes.
    #[cfg(debug_assertions)]
    fn debug_check_decodes<T: Decode<'a>>(&self, element_start: usize, version: i16) {
        if RECHECKING.with(Cell::get) {
            return;
        }
        let mut again = self.rechecker(element_start);
        let decoded = {
            let _rechecking = Rechecking::start();
            T::decode_from(&mut again, version)
        };
        debug_assert!(
            decoded.is_ok() && again.position == self.position,
            "validate_from and decode_from disagree at offset {}: {:?}, {} bytes against {}",
            self.base + element_start,
            decoded.err(),
            again.position - element_start,
            self.position - element_start,
        );
    }

    /// Reads an array of structs that must not be null.
    #[inline]
    pub fn read_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<StructArray<'a, T>, DecodeError> {
        let start = self.offset();
        self.read_nullable_struct_array(compact, version)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads an array of fixed-width scalars that may be null, without
    /// decoding or copying its elements.
    #[inline(always)]
    pub fn read_nullable_scalar_array<T: FixedWidth>(
        &mut self,
        compact: bool,
    ) -> Result<Option<ScalarArray<'a, T>>, DecodeError> {
        let Some(count) = self.read_array_len(compact, T::WIDTH)? else {
            return Ok(None);
        };
        let wire = self.take(count * T::WIDTH)?;
        Ok(Some(ScalarArray::from_wire(wire)))
    }

    /// Reads an array of fixed-width scalars that must not be null.
    #[inline(always)]
    pub fn read_scalar_array<T: FixedWidth>(
        &mut self,
        compact: bool,
    ) -> Result<ScalarArray<'a, T>, DecodeError> {
        let start = self.offset();
        self.read_nullable_scalar_array(compact)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads a nullable struct outside the tagged section: an int8 marker,
    /// negative for null, then the struct.
    #[inline]
    pub fn read_nullable_struct<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        let marker = self.read_i8()?;
        if marker != -1 && marker != 1 {
            self.canonical = false;
        }
        if marker < 0 {
            Ok(None)
        } else {
            read(self).map(Some)
        }
    }

    /// Reads a nullable struct inside a tagged field: a uvarint marker, 0 for
    /// null, then the struct.
    #[inline]
    pub fn read_tagged_nullable_struct<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        let marker = self.read_uvarint()?;
        if marker > 1 {
            self.canonical = false;
        }
        if marker == 0 {
            Ok(None)
        } else {
            read(self).map(Some)
        }
    }

    /// Reads a tagged-field section.
    ///
    /// `known` is called for each tag with a reader over exactly that field's
    /// bytes; it returns `Ok(true)` when it decoded the field, or `Ok(false)`
    /// for a tag it does not know, which is then kept in `unknown` in tag
    /// order. A known field must use all of its bytes. Tags may arrive in
    /// any order, as Kafka accepts them; a tag seen twice is an error, since
    /// keeping one copy would silently drop the other.
    ///
    /// Unknown fields are kept in wire form (see [`UnknownTaggedFields`]):
    /// borrowed from the input when they arrive in tag order, next to each
    /// other and with shortest uvarints, as Kafka writes them; copied, at
    /// most once, otherwise. However many there are, they never take more
    /// heap than the section's bytes plus a 4-byte index entry per field.
    #[inline(always)]
    pub fn read_tagged_fields(
        &mut self,
        unknown: &mut UnknownTaggedFields<'a>,
        known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<(), DecodeError> {
        // Most sections are empty: a single zero count.
        if self.input.get(self.position) == Some(&0) {
            self.position += 1;
            return Ok(());
        }
        let section = self.read_tagged_field_list(known)?;
        if section.unknown_count > 0 {
            self.keep_unknown_tagged_fields(&section, unknown);
        }
        Ok(())
    }

    /// Reads past a tagged-field section with the checks of
    /// [`Reader::read_tagged_fields`], keeping nothing.
    #[inline(always)]
    pub fn skip_tagged_fields(
        &mut self,
        known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<(), DecodeError> {
        if self.input.get(self.position) == Some(&0) {
            self.position += 1;
            return Ok(());
        }
        self.read_tagged_field_list(known).map(drop)
    }

    /// Reads the tagged-field section of a struct that has no tagged fields
    /// of its own: every field is kept in `unknown`.
    #[inline(always)]
    pub fn read_unknown_tagged_fields(
        &mut self,
        unknown: &mut UnknownTaggedFields<'a>,
    ) -> Result<(), DecodeError> {
        self.read_tagged_fields(unknown, no_known_tags)
    }

    /// Reads past the tagged-field section of a struct that has no tagged
    /// fields of its own, with the checks of
    /// [`Reader::read_unknown_tagged_fields`].
    #[inline(always)]
    pub fn skip_unknown_tagged_fields(&mut self) -> Result<(), DecodeError> {
        self.skip_tagged_fields(no_known_tags)
    }

    /// Reads a non-empty tagged-field section, handing each field to
    /// `known`, and describes the fields it did not take. Allocates nothing
    /// unless tags arrive out of order (then one `u32` per field with a tag
    /// of 64 or more, to find repeats).
    #[inline(never)]
    fn read_tagged_field_list(
        &mut self,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<TaggedSection, DecodeError> {
        let count = self.read_uvarint()?;
        // Each field takes at least two bytes: its tag and its size.
        if count as usize > self.remaining() / 2 {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                length: count.into(),
                remaining: self.remaining(),
            }));
        }
        let mut section = TaggedSection {
            fields_start: self.position,
            end: self.position,
            unknown_count: 0,
            unknown_len: 0,
            unknown_start: None,
            unknown_end: 0,
            borrowable: true,
            known_low: 0,
            known_high: Vec::new(),
        };
        let mut seen_low_tags: u64 = 0;
        let mut ascending = true;
        let mut previous_tag = None;
        for _ in 0..count {
            let entry_start = self.position;
            let tag_offset = self.offset();
            let tag = self.read_uvarint()?;
            let size = self.read_uvarint()? as usize;
            if previous_tag.is_some_and(|previous| tag <= previous) {
                // The encoder writes tags in ascending order.
                self.canonical = false;
                ascending = false;
            }
            previous_tag = Some(tag);
            if tag < 64 {
                let bit = 1u64 << tag;
                if seen_low_tags & bit != 0 {
                    return Err(DecodeError::new(
                        tag_offset,
                        DecodeErrorKind::DuplicateTag(tag),
                    ));
                }
                seen_low_tags |= bit;
            }
            let data_offset = self.offset();
            let header_len = self.position - entry_start;
            let data = self.take_announced(size)?;
            let mut field = Reader {
                input: data,
                position: 0,
                base: data_offset,
                canonical: true,
                heap_budget: self.heap_budget,
            };
            let known = known(tag, &mut field);
            self.heap_budget = field.heap_budget;
            if known? {
                // The encoder leaves out a known field at its default value,
                // which this reader does not compare against.
                self.canonical = false;
                if !field.is_empty() {
                    return Err(DecodeError::new(
                        data_offset,
                        DecodeErrorKind::TaggedFieldSize {
                            tag,
                            declared: size,
                            used: field.position,
                        },
                    ));
                }
                section.mark_known(tag);
                if section.unknown_count > 0 {
                    // A known field between unknown ones.
                    section.borrowable = false;
                }
            } else {
                let shortest = uvarint_len(tag) + uvarint_len(size as u32);
                if shortest != header_len {
                    section.borrowable = false;
                }
                section.unknown_start.get_or_insert(entry_start);
                section.unknown_end = self.position;
                section.unknown_count += 1;
                section.unknown_len += shortest + size;
            }
        }
        section.end = self.position;
        if !ascending {
            section.borrowable = false;
            self.check_repeated_high_tags(&section)?;
        }
        Ok(section)
    }

    /// Fails on the first tag of 64 or more that a section out of tag order
    /// repeats: the smallest such tag, at its second occurrence. (Tags below
    /// 64 were checked as they arrived.)
    #[cold]
    #[inline(never)]
    fn check_repeated_high_tags(&self, section: &TaggedSection) -> Result<(), DecodeError> {
        let mut high: Vec<u32> = self
            .tagged_entries(section)
            .map(|(tag, _, _)| tag)
            .filter(|&tag| tag >= 64)
            .collect();
        high.sort_unstable();
        let Some(tag) = high.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]) else {
            return Ok(());
        };
        let offset = self
            .tagged_entries(section)
            .filter(|&(t, _, _)| t == tag)
            .nth(1)
            .map_or(self.base + section.fields_start, |(_, at, _)| {
                self.base + at
            });
        Err(DecodeError::new(offset, DecodeErrorKind::DuplicateTag(tag)))
    }

    /// The entries of a section already read: (tag, position of the entry,
    /// position of its data), each within `self.input`.
    fn tagged_entries<'s>(
        &'s self,
        section: &TaggedSection,
    ) -> impl Iterator<Item = (u32, usize, usize)> + 's {
        let bytes = &self.input[..section.end];
        let mut at = section.fields_start;
        std::iter::from_fn(move || {
            let rest = bytes.get(at..).filter(|rest| !rest.is_empty())?;
            let (tag, tag_len) = get_uvarint(rest).ok()??;
            let (size, size_len) = get_uvarint(rest.get(tag_len..)?).ok()??;
            let entry = at;
            let data = at + tag_len + size_len;
            at = data + size as usize;
            Some((tag, entry, data))
        })
    }

    /// Keeps the unknown fields of a section just read, in tag order:
    /// borrowed when they are already in that form, copied otherwise.
    #[cold]
    #[inline(never)]
    fn keep_unknown_tagged_fields(
        &self,
        section: &TaggedSection,
        unknown: &mut UnknownTaggedFields<'a>,
    ) {
        let input = self.input;
        let kept = if section.borrowable {
            let start = section.unknown_start.unwrap_or(section.unknown_end);
            UnknownTaggedFields::from_checked_entries(
                Cow::Borrowed(&input[start..section.unknown_end]),
                section.unknown_count,
            )
        } else {
            // Where each unknown field starts, sorted by tag (then by
            // position, so that the order is fixed): one word per field of
            // at least three bytes (only 128 tags fit in two).
            let mut fields: Vec<usize> = Vec::with_capacity(section.unknown_count);
            for (tag, at, _) in self.tagged_entries(section) {
                if !section.is_known(tag) {
                    fields.push(at);
                }
            }
            let tag_at = |at: usize| {
                input
                    .get(at..)
                    .and_then(|rest| get_uvarint(rest).ok().flatten())
                    .map_or(0, |(tag, _)| tag)
            };
            fields.sort_unstable_by_key(|&at| (tag_at(at), at));
            let mut entries = Vec::with_capacity(section.unknown_len);
            for at in fields {
                let Some(rest) = input.get(at..section.end) else {
                    continue;
                };
                let Ok(Some((tag, tag_len))) = get_uvarint(rest) else {
                    continue;
                };
                let Ok(Some((size, size_len))) = get_uvarint(&rest[tag_len..]) else {
                    continue;
                };
                let data = at + tag_len + size_len;
                put_uvarint(&mut entries, tag);
                put_uvarint(&mut entries, size);
                entries.extend_from_slice(&input[data..data + size as usize]);
            }
            UnknownTaggedFields::from_checked_entries(Cow::Owned(entries), section.unknown_count)
        };
        if unknown.is_empty() {
            *unknown = kept;
        } else {
            unknown.extend(kept.iter().collect());
        }
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

/// The `known` callback of a struct without tagged fields of its own: one
/// function for all of them, so the section reader is compiled once for them.
fn no_known_tags(_tag: u32, _field: &mut Reader<'_>) -> Result<bool, DecodeError> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A struct holding an array of itself, counting its decodes, to
    /// measure the work of reading deeply nested arrays.
    #[derive(Debug, Clone)]
    struct Node;

    thread_local! {
        static NODE_DECODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    impl<'a> Decode<'a> for Node {
        fn decode_from(reader: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
            NODE_DECODES.with(|n| n.set(n.get() + 1));
            reader.read_struct_array::<Node>(false, version)?;
            Ok(Node)
        }
    }

    #[test]
    fn nested_struct_arrays_are_read_in_work_linear_per_level() {
        // A chain of nodes, each holding one, `DEPTH` deep.
        const DEPTH: usize = 14;
        let mut wire = [0, 0, 0, 1].repeat(DEPTH);
        wire.extend_from_slice(&[0, 0, 0, 0]);
        NODE_DECODES.with(|n| n.set(0));
        let mut reader = Reader::new(&wire);
        assert!(Node::decode_from(&mut reader, 0).is_ok());
        assert!(reader.finish().is_ok());
        let decodes = NODE_DECODES.with(std::cell::Cell::get);
        // Each node is validated once per enclosing level, and decoded
        // again by the debug self-check at most once more per level: about
        // DEPTH^2, never 2^DEPTH.
        let bound = 2 * (DEPTH + 1) * (DEPTH + 1);
        assert!(
            decodes <= bound,
            "{decodes} node decodes for a chain {DEPTH} deep (bound {bound})"
        );
    }

    #[test]
    fn classic_and_compact_strings() {
        let mut r = Reader::new(&[0, 2, b'h', b'i', 3, b'y', b'o', 0xff, 0xff, 0]);
        assert_eq!(r.read_string(false).ok(), Some(Cow::Borrowed("hi")));
        assert_eq!(r.read_string(true).ok(), Some(Cow::Borrowed("yo")));
        assert_eq!(r.read_nullable_string(false).ok(), Some(None));
        assert_eq!(r.read_nullable_string(true).ok(), Some(None));
        assert!(r.finish().is_ok());
    }

    #[test]
    fn hostile_lengths_fail_before_allocating() {
        let mut r = Reader::new(&[0x7f, 0xff, 0xff, 0xff, 1, 2]);
        let error = r.read_array(false, |r| r.read_i8()).unwrap_err();
        assert!(matches!(
            error.kind(),
            DecodeErrorKind::LengthExceedsInput {
                length: 0x7fff_ffff,
                remaining: 2
            }
        ));
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xfe]);
        let error = r.read_nullable_bytes(false).unwrap_err();
        assert_eq!(error.kind(), &DecodeErrorKind::InvalidLength(-2));
        assert_eq!(error.offset(), 0);
        let mut r = Reader::new(&[0, 4, 0xc3, 0x28, b'a', b'b']);
        let error = r.read_string(false).unwrap_err();
        assert_eq!(
            error.kind(),
            &DecodeErrorKind::InvalidUtf8 { valid_up_to: 0 }
        );
        assert_eq!(error.offset(), 2);
    }

    #[test]
    fn tagged_fields_keep_unknowns_in_order_and_reject_duplicates() {
        // Two fields: tag 5 (1 byte), tag 1 (2 bytes); neither known.
        let input = [2, 5, 1, 0xaa, 1, 2, 0xbb, 0xcc];
        let mut unknown = UnknownTaggedFields::new();
        let mut r = Reader::new(&input);
        r.read_tagged_fields(&mut unknown, |_, _| Ok(false))
            .unwrap_or_default();
        assert_eq!(
            unknown.iter().map(|f| f.tag).collect::<Vec<_>>(),
            vec![1, 5]
        );
        assert!(r.is_empty());

        let input = [2, 5, 1, 0xaa, 5, 1, 0xbb];
        let mut r = Reader::new(&input);
        let error = r
            .read_tagged_fields(&mut UnknownTaggedFields::new(), |_, _| Ok(false))
            .unwrap_err();
        assert_eq!(error.kind(), &DecodeErrorKind::DuplicateTag(5));
        assert_eq!(error.offset(), 4);
    }

    #[test]
    fn known_tagged_field_must_use_its_bytes() {
        let input = [1, 0, 2, 7, 8];
        let mut r = Reader::new(&input);
        let error = r
            .read_tagged_fields(&mut UnknownTaggedFields::new(), |_, field| {
                field.read_i8().map(|_| true)
            })
            .unwrap_err();
        assert_eq!(
            error.kind(),
            &DecodeErrorKind::TaggedFieldSize {
                tag: 0,
                declared: 2,
                used: 1
            }
        );
    }
}
