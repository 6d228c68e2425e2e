//! Runs of fixed-width fields, read and written with one length check.
//!
//! Where a struct holds consecutive fixed-width fields that are on the wire
//! in the same versions (a partition's index, leader and epoch), the
//! generated code reads them as one run: [`Reader::read_fixed`] checks that
//! the run's bytes are all there, once, and [`FixedFields`] then takes each
//! field from them at an offset the compiler knows. Writing is the mirror:
//! [`FixedFieldsWriter`] assembles the run on the stack, and
//! [`Writer::put_fixed`] appends it with one capacity check.
//!
//! A truncated run fails exactly as its first missing field would have
//! alone: at that field's offset, naming it, with its width as the bytes
//! needed.
//!
//! Bools stay out of runs: reading one also notes a byte other than 0 and 1
//! (see [`Reader::is_canonical`]).

use super::error::{DecodeError, DecodeErrorKind};
use super::reader::Reader;
use super::uuid::Uuid;
use super::writer::Writer;

/// One field of a run: its name, for errors, and its width in bytes.
pub type FixedField = (&'static str, usize);

/// The `N` bytes of a run of fixed-width fields, checked to be there, taken
/// front to back.
#[derive(Debug)]
pub struct FixedFields<'a, const N: usize> {
    bytes: &'a [u8; N],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Takes the next `N` bytes, the run of fixed-width `fields`, whose
    /// widths add up to `N`. When fewer are left, the error is the one the
    /// first field that does not fit would give when read alone.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_fixed<const N: usize>(
        &mut self,
        fields: &'static [FixedField],
    ) -> Result<FixedFields<'a, N>, DecodeError> {
        match self.unread.split_first_chunk::<N>() {
            Some((bytes, unread)) => {
                self.unread = unread;
                Ok(FixedFields { bytes, at: 0 })
            }
            None => Err(truncated_run(self.offset(), self.remaining(), fields)),
        }
    }

    /// Moves past the next `width` bytes, the run of fixed-width `fields`,
    /// whose widths add up to `width`; fails as [`Reader::read_fixed`] does.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn skip_fixed(
        &mut self,
        width: usize,
        fields: &'static [FixedField],
    ) -> Result<(), DecodeError> {
        match self.unread.get(width..) {
            Some(unread) => {
                self.unread = unread;
                Ok(())
            }
            None => Err(truncated_run(self.offset(), self.remaining(), fields)),
        }
    }
}

/// The error of the first of `fields` that does not fit in the `remaining`
/// bytes at `offset`. It takes figures, not the reader, so that the reader's
/// address is never passed to a function (see [`Reader::error`]).
#[cold]
#[inline(never)]
fn truncated_run(offset: usize, remaining: usize, fields: &[FixedField]) -> DecodeError {
    let mut at = 0;
    let mut last = "";
    for &(name, width) in fields {
        let left = remaining.saturating_sub(at);
        if width > left {
            let kind = DecodeErrorKind::Truncated {
                needed: width,
                remaining: left,
            };
            return DecodeError::new(offset + at, kind).in_field(name);
        }
        at += width;
        last = name;
    }
    // Only when the widths add up to less than the run: a generator
    // fault, reported against the whole run.
    let kind = DecodeErrorKind::Truncated {
        needed: at,
        remaining,
    };
    DecodeError::new(offset, kind).in_field(last)
}

impl<const N: usize> FixedFields<'_, N> {
    /// The next `W` bytes of the run.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn take<const W: usize>(&mut self) -> [u8; W] {
        let chunk = self
            .bytes
            .get(self.at..)
            .and_then(|rest| rest.first_chunk::<W>());
        self.at += W;
        debug_assert!(chunk.is_some(), "a field read past its run of {N} bytes");
        chunk.copied().unwrap_or([0; W])
    }

    /// The next field, an int8.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i8(&mut self) -> i8 {
        i8::from_be_bytes(self.take())
    }

    /// The next field, a big-endian int16.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i16(&mut self) -> i16 {
        i16::from_be_bytes(self.take())
    }

    /// The next field, a big-endian uint16.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.take())
    }

    /// The next field, a big-endian int32.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i32(&mut self) -> i32 {
        i32::from_be_bytes(self.take())
    }

    /// The next field, a big-endian uint32.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }

    /// The next field, a big-endian int64.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i64(&mut self) -> i64 {
        i64::from_be_bytes(self.take())
    }

    /// The next field, a float64 from its big-endian IEEE 754 bits.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn f64(&mut self) -> f64 {
        f64::from_be_bytes(self.take())
    }

    /// The next field, a uuid.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn uuid(&mut self) -> Uuid {
        Uuid(self.take())
    }
}

/// A run of `N` bytes of fixed-width fields, assembled front to back and
/// then appended with [`Writer::put_fixed`].
#[derive(Debug, Clone, Copy)]
pub struct FixedFieldsWriter<const N: usize> {
    bytes: [u8; N],
    at: usize,
}

impl<const N: usize> Default for FixedFieldsWriter<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> FixedFieldsWriter<N> {
    /// An empty run.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn new() -> Self {
        FixedFieldsWriter {
            bytes: [0; N],
            at: 0,
        }
    }

    /// The run with `field` next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn put<const W: usize>(mut self, field: [u8; W]) -> Self {
        let slot = self
            .bytes
            .get_mut(self.at..)
            .and_then(|rest| rest.first_chunk_mut::<W>());
        debug_assert!(slot.is_some(), "a field written past its run of {N} bytes");
        if let Some(slot) = slot {
            *slot = field;
        }
        self.at += W;
        self
    }

    /// The run with an int8 next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i8(self, value: i8) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a big-endian int16 next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i16(self, value: i16) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a big-endian uint16 next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn u16(self, value: u16) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a big-endian int32 next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i32(self, value: i32) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a big-endian uint32 next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn u32(self, value: u32) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a big-endian int64 next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn i64(self, value: i64) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a float64's big-endian IEEE 754 bits next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn f64(self, value: f64) -> Self {
        self.put(value.to_be_bytes())
    }

    /// The run with a uuid next.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn uuid(self, value: Uuid) -> Self {
        self.put(value.0)
    }
}

impl Writer<'_> {
    /// Appends a run of fixed-width fields, with one capacity check.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn put_fixed<const N: usize>(&mut self, run: FixedFieldsWriter<N>) {
        debug_assert_eq!(run.at, N, "a run of {N} bytes was not filled");
        self.put_slice(&run.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[FixedField] = &[("index", 4), ("epoch", 2), ("id", 16)];

    #[test]
    fn reads_each_field_of_a_run_in_order() {
        let mut input = vec![0, 0, 1, 2, 0xff, 0xfe];
        input.extend(1..=16u8);
        input.push(9);
        let mut r = Reader::new(&input);
        let mut run = r.read_fixed::<22>(FIELDS).unwrap();
        assert_eq!(run.i32(), 0x102);
        assert_eq!(run.i16(), -2);
        assert_eq!(run.uuid().0[15], 16);
        assert_eq!(r.remaining(), 1);
    }

    #[test]
    fn a_truncated_run_names_the_first_field_that_does_not_fit() {
        let input = [7u8; 10];
        let mut r = Reader::with_base(&input, 100);
        let error = r.read_fixed::<22>(FIELDS).unwrap_err();
        // As `read_uuid` alone would fail at the uuid: 4 + 2 bytes in,
        // 16 needed, 4 left.
        let alone = {
            let mut r = Reader::with_base(&input, 100);
            r.read_i32().unwrap();
            r.read_i16().unwrap();
            r.read_uuid().unwrap_err().in_field("id")
        };
        assert_eq!(error, alone);
        assert_eq!(error.offset(), 106);
        assert_eq!(r.remaining(), 10, "a failed run takes nothing");
    }

    #[test]
    fn skipping_a_run_checks_it_as_reading_does() {
        let input = [7u8; 23];
        let mut r = Reader::new(&input);
        r.skip_fixed(22, FIELDS).unwrap();
        assert_eq!(r.remaining(), 1);
        let mut r = Reader::with_base(&input[..10], 100);
        let skipped = r.skip_fixed(22, FIELDS).unwrap_err();
        assert_eq!(skipped, r.read_fixed::<22>(FIELDS).unwrap_err());
        assert_eq!(r.remaining(), 10);
    }

    #[test]
    fn a_run_cut_inside_its_first_field_names_that_field() {
        let mut r = Reader::new(&[1, 2]);
        let error = r.read_fixed::<22>(FIELDS).unwrap_err();
        assert_eq!(error.offset(), 0);
        assert_eq!(
            error.kind(),
            &DecodeErrorKind::Truncated {
                needed: 4,
                remaining: 2
            }
        );
        assert_eq!(error.to_string(), {
            let mut r = Reader::new(&[1, 2]);
            r.read_i32().unwrap_err().in_field("index").to_string()
        });
    }

    #[test]
    fn writes_the_bytes_the_single_writes_would() {
        let id = Uuid(*b"0123456789abcdef");
        let mut runs = Vec::new();
        Writer::new(&mut runs).put_fixed(
            FixedFieldsWriter::<45>::new()
                .i8(-1)
                .i16(0x0102)
                .u16(0x0304)
                .i32(-5)
                .u32(6)
                .i64(7)
                .f64(1.5)
                .uuid(id),
        );
        let mut singles = Vec::new();
        let mut w = Writer::new(&mut singles);
        w.put_i8(-1);
        w.put_i16(0x0102);
        w.put_u16(0x0304);
        w.put_i32(-5);
        w.put_u32(6);
        w.put_i64(7);
        w.put_f64(1.5);
        w.put_slice(id.as_bytes());
        drop(w);
        assert_eq!(runs, singles);
    }
}
