//! Arrays of fixed-width scalars, kept in wire form and decoded on access.
//!
//! Decoding a `[]int32` field copies nothing and allocates nothing: the
//! array borrows the big-endian bytes from the input and converts each element
//! when it is read. This matters for messages like MetadataResponse, whose
//! replica lists would otherwise cost one allocation each.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::length::array_len_len;
use super::reader::Reader;
use super::uuid::Uuid;
use super::writer::Writer;

/// A scalar with a fixed big-endian wire width.
pub trait FixedWidth: Copy {
    /// Bytes per element on the wire.
    const WIDTH: usize;
    /// Reads one element from exactly `WIDTH` bytes.
    fn from_wire(bytes: &[u8]) -> Self;
    /// Appends the element's wire bytes.
    fn to_wire(self, out: &mut Vec<u8>);
}

macro_rules! fixed_width_number {
    ($($ty:ty),*) => {$(
        impl FixedWidth for $ty {
            const WIDTH: usize = std::mem::size_of::<$ty>();
            #[inline]
            fn from_wire(bytes: &[u8]) -> Self {
                let mut array = [0u8; std::mem::size_of::<$ty>()];
                array.copy_from_slice(bytes);
                <$ty>::from_be_bytes(array)
            }
            #[inline]
            fn to_wire(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
        }
    )*};
}

fixed_width_number!(i8, i16, u16, i32, u32, i64, f64);

impl FixedWidth for bool {
    const WIDTH: usize = 1;
    #[inline]
    fn from_wire(bytes: &[u8]) -> Self {
        bytes.first().is_some_and(|b| *b != 0)
    }
    #[inline]
    fn to_wire(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

impl FixedWidth for Uuid {
    const WIDTH: usize = 16;
    #[inline]
    fn from_wire(bytes: &[u8]) -> Self {
        let mut array = [0u8; 16];
        array.copy_from_slice(bytes);
        Uuid(array)
    }
    #[inline]
    fn to_wire(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0);
    }
}

/// An array of scalars stored as its big-endian wire bytes.
///
/// Decoded arrays borrow from the input; arrays built by hand own their
/// bytes. Either way [`ScalarArray::iter`] yields the values and encoding is a
/// single copy.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ScalarArray<'a, T> {
    wire: Cow<'a, [u8]>,
    element: PhantomData<T>,
}

impl<'a, T: FixedWidth> ScalarArray<'a, T> {
    /// An empty array.
    pub const fn new() -> Self {
        ScalarArray {
            wire: Cow::Borrowed(&[]),
            element: PhantomData,
        }
    }

    /// Wraps wire bytes. `wire.len()` must be a multiple of `T::WIDTH`;
    /// a trailing partial element is ignored.
    pub fn from_wire(wire: &'a [u8]) -> Self {
        let whole = wire.len() - wire.len() % T::WIDTH;
        ScalarArray {
            wire: Cow::Borrowed(&wire[..whole]),
            element: PhantomData,
        }
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.wire.len() / T::WIDTH
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.wire.is_empty()
    }

    /// The element at `index`, if any.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        let start = index.checked_mul(T::WIDTH)?;
        let end = start.checked_add(T::WIDTH)?;
        self.wire.get(start..end).map(T::from_wire)
    }

    /// The elements, decoded one by one.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + '_ {
        self.wire.chunks_exact(T::WIDTH).map(T::from_wire)
    }

    /// The elements, collected.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }

    /// The big-endian wire bytes.
    #[inline]
    pub fn wire_bytes(&self) -> &[u8] {
        &self.wire
    }

    /// Appends an element, taking ownership of the bytes if they were borrowed.
    pub fn push(&mut self, value: T) {
        value.to_wire(self.wire.to_mut());
    }

    /// Detaches the array from the input it borrows.
    pub fn into_owned(self) -> ScalarArray<'static, T> {
        ScalarArray {
            wire: Cow::Owned(self.wire.into_owned()),
            element: PhantomData,
        }
    }
}

impl<T: FixedWidth> Default for ScalarArray<'_, T> {
    fn default() -> Self {
        ScalarArray::new()
    }
}

impl<T: FixedWidth> FromIterator<T> for ScalarArray<'_, T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut wire = Vec::new();
        for value in iter {
            value.to_wire(&mut wire);
        }
        ScalarArray {
            wire: Cow::Owned(wire),
            element: PhantomData,
        }
    }
}

impl<T: FixedWidth> From<Vec<T>> for ScalarArray<'_, T> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T: FixedWidth> From<&[T]> for ScalarArray<'_, T> {
    fn from(values: &[T]) -> Self {
        values.iter().copied().collect()
    }
}

impl<T: FixedWidth + fmt::Debug> fmt::Debug for ScalarArray<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The most memory reserved up front for an array, in bytes. A count is
/// checked against the bytes left, but an element can be much larger in
/// memory than on the wire, so a larger array grows as its elements decode
/// instead of being reserved whole on a peer's word.
const MAX_UPFRONT_RESERVATION: usize = 64 * 1024;

/// The capacity to reserve for an array of `count` elements of `T`.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
fn initial_capacity<T>(count: usize) -> usize {
    count.min(MAX_UPFRONT_RESERVATION / std::mem::size_of::<T>().max(1))
}

impl<'a> Reader<'a> {
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

    /// Reads an array of fixed-width scalars that may be null, without
    /// decoding or copying its elements.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_scalar_array<T: FixedWidth>(
        &mut self,
        compact: bool,
    ) -> Result<ScalarArray<'a, T>, DecodeError> {
        let start = self.offset();
        self.read_nullable_scalar_array(compact)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }
}

impl Writer<'_> {
    /// Writes an array, which may be null, encoding each element with `element`.
    #[inline]
    pub fn put_nullable_array<T>(
        &mut self,
        items: Option<&[T]>,
        compact: bool,
        mut element: impl FnMut(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        self.put_array_len(items.map(<[T]>::len), compact)?;
        for (index, item) in items.unwrap_or_default().iter().enumerate() {
            element(self, item).map_err(|e| e.at_index(index))?;
        }
        Ok(())
    }

    /// Writes an array.
    #[inline]
    pub fn put_array<T>(
        &mut self,
        items: &[T],
        compact: bool,
        element: impl FnMut(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        self.put_nullable_array(Some(items), compact, element)
    }

    /// Writes an array of scalars, which may be null.
    #[inline]
    pub fn put_nullable_scalar_array<T: FixedWidth>(
        &mut self,
        items: Option<&ScalarArray<'_, T>>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.put_array_len(items.map(ScalarArray::len), compact)?;
        if let Some(items) = items {
            self.put_slice(items.wire_bytes());
        }
        Ok(())
    }

    /// Writes an array of scalars.
    #[inline]
    pub fn put_scalar_array<T: FixedWidth>(
        &mut self,
        items: &ScalarArray<'_, T>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.put_nullable_scalar_array(Some(items), compact)
    }
}

/// The encoded size of an array, which may be null.
#[inline]
pub fn nullable_array_len<T>(
    items: Option<&[T]>,
    compact: bool,
    element: impl FnMut(&T) -> usize,
) -> usize {
    array_len_len(items.map(<[T]>::len), compact)
        + items.unwrap_or_default().iter().map(element).sum::<usize>()
}

/// The encoded size of an array.
#[inline]
pub fn array_len<T>(items: &[T], compact: bool, element: impl FnMut(&T) -> usize) -> usize {
    nullable_array_len(Some(items), compact, element)
}

/// The encoded size of an array of scalars, which may be null.
#[inline]
pub fn nullable_scalar_array_len<T: FixedWidth>(
    items: Option<&ScalarArray<'_, T>>,
    compact: bool,
) -> usize {
    array_len_len(items.map(ScalarArray::len), compact) + items.map_or(0, |a| a.wire_bytes().len())
}

/// The encoded size of an array of scalars.
#[inline]
pub fn scalar_array_len<T: FixedWidth>(items: &ScalarArray<'_, T>, compact: bool) -> usize {
    nullable_scalar_array_len(Some(items), compact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_elements_lazily() {
        let wire = [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe];
        let array = ScalarArray::<i32>::from_wire(&wire);
        assert_eq!(array.len(), 2);
        assert_eq!(array.to_vec(), vec![1, -2]);
        assert_eq!(array.get(1), Some(-2));
        assert_eq!(array.get(2), None);
        assert_eq!(array.get(usize::MAX), None);
    }

    #[test]
    fn get_near_the_top_of_the_address_space_is_none() {
        // `index * WIDTH` fits, but one element past it does not.
        let wire = [0u8; 16];
        let uuids = ScalarArray::<Uuid>::from_wire(&wire);
        assert_eq!(uuids.get(usize::MAX / 16), None);
        let longs = ScalarArray::<i64>::from_wire(&wire[..8]);
        assert_eq!(longs.get(usize::MAX / 8), None);
    }

    #[test]
    fn built_arrays_equal_decoded_ones() {
        let built: ScalarArray<i32> = vec![1, -2].into();
        let wire = [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe];
        assert_eq!(built, ScalarArray::from_wire(&wire));
        let mut pushed = ScalarArray::<i32>::from_wire(&wire[..4]);
        pushed.push(-2);
        assert_eq!(pushed, built);
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
        // Any negative length is null, as Kafka reads it; only -1 is
        // written back byte for byte.
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(r.read_nullable_bytes(false), Ok(None));
        assert!(!r.is_canonical());
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(r.read_nullable_bytes(false), Ok(None));
        assert!(r.is_canonical());
        let mut r = Reader::new(&[0xff, 0xfe]);
        let error = r.read_string(false).unwrap_err();
        assert_eq!(error.kind(), &DecodeErrorKind::UnexpectedNull);
        assert_eq!(error.offset(), 0);
        let mut r = Reader::new(&[0, 4, 0xc3, 0x28, b'a', b'b']);
        let error = r.read_string(false).unwrap_err();
        assert_eq!(
            error.kind(),
            &DecodeErrorKind::InvalidUtf8 { valid_up_to: 0 }
        );
        assert_eq!(error.offset(), 2);
    }
}
