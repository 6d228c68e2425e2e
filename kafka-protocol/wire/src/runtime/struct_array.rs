//! Arrays of structs: checked completely when a message is decoded, decoded
//! once when read, and kept with their wire bytes so that an unchanged array
//! re-encodes by copying them.
//!
//! An array of two or more elements that hold arrays of structs that are
//! never null (a Metadata response's topics, a Fetch response's topics; see
//! [`Decode::HOLDS_STRUCT_ARRAYS`]) is decoded up front into a `Vec` whose
//! elements borrow their strings and bytes from the input: one allocation
//! per array. Iterating it hands out references and [`StructArray::get`] is
//! an index. Decoding it up front is what keeps a reader of nested arrays
//! from checking the inner elements once more at every level.
//!
//! Any other array (a Metadata topic's partitions, the brokers) is
//! checked completely with [`Decode::validate_from`], which builds nothing,
//! and kept as its wire bytes; each element is decoded when it is read, as a
//! [`Cow::Owned`]. Decoding it allocates nothing.
//!
//! The heap of a decode is bounded: each has a budget of four times its
//! input plus 64 KiB (see [`Reader::new`]). An array whose `Vec` would not
//! fit in what is left is kept as checked wire bytes, like the other arrays, and
//! so are arrays nested in it. Only hostile or extreme inputs (hundreds of
//! thousands of elements of a few bytes each) take this path.
//!
//! Arrays built in code hold a `Vec`; [`StructArray::to_mut`] gives that
//! `Vec` to change, decoding a wire-form array first, like
//! [`Cow::to_mut`](std::borrow::Cow::to_mut). The array then encodes element
//! by element.

use std::borrow::Cow;
use std::fmt;

use super::codec::Decode;
use super::reader::Reader;

/// An array of structs: decoded elements with the wire bytes they came from,
/// checked wire bytes alone (most arrays, and any past the heap budget; see
/// [`Decode::HOLDS_STRUCT_ARRAYS`] and [`Reader::new`]), or a `Vec` built in
/// code.
///
/// [`StructArray::iter`] yields every element in any form, as a [`Cow`]:
/// borrowed from the `Vec`, or decoded from the wire. Encoding a
/// decoded array at the version it was decoded at copies its bytes when
/// they are exactly what encoding its elements would write (see
/// [`StructArray::encodes_by_copy`]); encoding always gives the same bytes
/// for equal values.
pub struct StructArray<'a, T> {
    repr: Repr<'a, T>,
}

enum Repr<'a, T> {
    /// Elements decoded at `version` from `bytes`; `canonical` when encoding
    /// them at that version gives back `bytes`.
    Decoded {
        items: Vec<T>,
        bytes: &'a [u8],
        version: i16,
        canonical: bool,
    },
    /// Elements checked at `version`, decoded when read; `canonical` as
    /// above.
    Wire {
        bytes: &'a [u8],
        count: u32,
        version: i16,
        canonical: bool,
    },
    Owned(Vec<T>),
}

impl<'a, T> StructArray<'a, T> {
    /// An empty array.
    pub const fn new() -> Self {
        StructArray {
            repr: Repr::Owned(Vec::new()),
        }
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Wire { count, .. } => *count as usize,
            Repr::Decoded { items, .. } | Repr::Owned(items) => items.len(),
        }
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The wire bytes of the elements and the version they were decoded at,
    /// when the array came from the wire and has not been changed since.
    pub fn wire(&self) -> Option<(&'a [u8], i16)> {
        match &self.repr {
            Repr::Decoded { bytes, version, .. } | Repr::Wire { bytes, version, .. } => {
                Some((bytes, *version))
            }
            Repr::Owned(_) => None,
        }
    }

    /// The elements, unless they are kept as wire bytes only (see
    /// [`Decode::HOLDS_STRUCT_ARRAYS`] and [`Reader::new`]).
    pub fn as_slice(&self) -> Option<&[T]> {
        match &self.repr {
            Repr::Wire { .. } => None,
            Repr::Decoded { items, .. } | Repr::Owned(items) => Some(items),
        }
    }

    /// True when encoding the array at `version` copies its wire bytes:
    /// it came from the wire at that version, has not been changed, and its
    /// bytes are in the one form the encoder writes (no bool byte other than
    /// 0 and 1, no redundant varint bytes, tagged fields in order and none
    /// known to this schema; see [`Reader::is_canonical`]). Otherwise each
    /// element is encoded.
    pub fn encodes_by_copy(&self, version: i16) -> bool {
        self.bytes_to_copy(version).is_some()
    }

    /// The bytes encoding at `version` copies, when
    /// [`StructArray::encodes_by_copy`].
    pub(crate) fn bytes_to_copy(&self, version: i16) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Decoded {
                bytes,
                version: decoded_at,
                canonical: true,
                ..
            }
            | Repr::Wire {
                bytes,
                version: decoded_at,
                canonical: true,
                ..
            } if decoded_at == version => Some(bytes),
            _ => None,
        }
    }

    /// Wraps elements that have just been decoded at `version` from
    /// `bytes`. Only the reader creates these.
    pub(crate) fn from_decoded_wire(
        items: Vec<T>,
        bytes: &'a [u8],
        version: i16,
        canonical: bool,
    ) -> Self {
        StructArray {
            repr: Repr::Decoded {
                items,
                bytes,
                version,
                canonical,
            },
        }
    }

    /// Wraps the bytes of `count` elements that have just been checked at
    /// `version`. Only the reader creates these.
    pub(crate) fn from_checked_wire(
        bytes: &'a [u8],
        count: u32,
        version: i16,
        canonical: bool,
    ) -> Self {
        StructArray {
            repr: Repr::Wire {
                bytes,
                count,
                version,
                canonical,
            },
        }
    }
}

impl<'a, T: Decode<'a> + Clone> StructArray<'a, T> {
    /// The elements in order: borrowed from the `Vec`, or, for an array
    /// kept as wire bytes only, decoded one by one. It yields exactly
    /// [`len`](Self::len) elements: a checked element that failed to decode
    /// would be a bug in this crate, and panics rather than ending the
    /// iteration early.
    pub fn iter(&self) -> Iter<'_, 'a, T> {
        Iter {
            inner: match &self.repr {
                Repr::Wire {
                    bytes,
                    count,
                    version,
                    ..
                } => IterInner::Wire(WireElements::new(bytes, *count, *version)),
                Repr::Decoded { items, .. } | Repr::Owned(items) => IterInner::Owned(items.iter()),
            },
        }
    }

    /// The element at `index`: an index into the `Vec`, except for an array
    /// kept as wire bytes only, which decodes the elements before it too.
    pub fn get(&self, index: usize) -> Option<Cow<'_, T>> {
        match &self.repr {
            Repr::Decoded { items, .. } | Repr::Owned(items) => items.get(index).map(Cow::Borrowed),
            Repr::Wire { .. } => self.iter().nth(index),
        }
    }

    /// The elements as a `Vec` that can be changed. The array no longer
    /// remembers its wire bytes, so it then encodes element by element.
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        let items = match std::mem::take(&mut self.repr) {
            Repr::Wire {
                bytes,
                count,
                version,
                ..
            } => WireElements::new(bytes, count, version).collect(),
            Repr::Decoded { items, .. } | Repr::Owned(items) => items,
        };
        self.repr = Repr::Owned(items);
        match &mut self.repr {
            Repr::Owned(items) => items,
            // Set just above.
            Repr::Decoded { .. } | Repr::Wire { .. } => {
                unreachable!("the array was just turned into a Vec")
            }
        }
    }

    /// Appends an element, decoding the array first when it came from the
    /// wire.
    pub fn push(&mut self, value: T) {
        self.to_mut().push(value);
    }

    /// The elements, decoded, in a `Vec`.
    pub fn into_vec(self) -> Vec<T> {
        self.into_iter().collect()
    }
}

/// Decodes the elements of checked wire bytes one after another.
struct WireElements<'a, T> {
    reader: Reader<'a>,
    remaining: u32,
    version: i16,
    element: std::marker::PhantomData<T>,
}

impl<'a, T> WireElements<'a, T> {
    fn new(bytes: &'a [u8], count: u32, version: i16) -> Self {
        WireElements {
            // No heap budget: arrays nested in these elements stay wire
            // bytes too, so that elements read one at a time stay small.
            reader: Reader::without_heap(bytes),
            remaining: count,
            version,
            element: std::marker::PhantomData,
        }
    }
}

impl<'a, T: Decode<'a>> Iterator for WireElements<'a, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // These bytes passed `validate_from` at this version when the array
        // was read, and decoding depends on nothing else, so this succeeds.
        // Were it ever to fail, stopping here would silently yield fewer
        // elements than `len()` promised: a bug in the generated code, so
        // it is reported as loudly as one, in every build.
        match T::decode_from(&mut self.reader, self.version) {
            Ok(element) => Some(element),
            Err(error) => broken_promise(self.remaining, &error),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

/// Reports a checked element that does not decode: `validate_from` and
/// `decode_from` disagree, which is a bug in this crate, never a fault in
/// the input (every element was checked when the array was read).
#[cold]
#[inline(never)]
fn broken_promise(left: u32, error: &super::error::DecodeError) -> ! {
    panic!(
        "bug in kafka-wire: a checked struct array element failed to decode \
         with {left} element(s) still to come: {error}"
    )
}

/// The elements of a [`StructArray`], from [`StructArray::iter`].
pub struct Iter<'s, 'a, T> {
    inner: IterInner<'s, 'a, T>,
}

enum IterInner<'s, 'a, T> {
    Wire(WireElements<'a, T>),
    Owned(std::slice::Iter<'s, T>),
}

impl<'s, 'a, T: Decode<'a> + Clone> Iterator for Iter<'s, 'a, T> {
    type Item = Cow<'s, T>;

    #[inline]
    fn next(&mut self) -> Option<Cow<'s, T>> {
        match &mut self.inner {
            IterInner::Wire(elements) => elements.next().map(Cow::Owned),
            IterInner::Owned(items) => items.next().map(Cow::Borrowed),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            IterInner::Wire(elements) => elements.size_hint(),
            IterInner::Owned(items) => items.size_hint(),
        }
    }
}

impl<'a, T: Decode<'a> + Clone> ExactSizeIterator for Iter<'_, 'a, T> {}

/// The elements of a [`StructArray`], by value.
pub struct IntoIter<'a, T> {
    inner: IntoIterInner<'a, T>,
}

enum IntoIterInner<'a, T> {
    Wire(WireElements<'a, T>),
    Owned(std::vec::IntoIter<T>),
}

impl<'a, T: Decode<'a>> Iterator for IntoIter<'a, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match &mut self.inner {
            IntoIterInner::Wire(elements) => elements.next(),
            IntoIterInner::Owned(items) => items.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            IntoIterInner::Wire(elements) => elements.size_hint(),
            IntoIterInner::Owned(items) => items.size_hint(),
        }
    }
}

impl<'a, T: Decode<'a>> ExactSizeIterator for IntoIter<'a, T> {}

impl<'a, T: Decode<'a>> IntoIterator for StructArray<'a, T> {
    type Item = T;
    type IntoIter = IntoIter<'a, T>;

    fn into_iter(self) -> IntoIter<'a, T> {
        IntoIter {
            inner: match self.repr {
                Repr::Wire {
                    bytes,
                    count,
                    version,
                    ..
                } => IntoIterInner::Wire(WireElements::new(bytes, count, version)),
                Repr::Decoded { items, .. } | Repr::Owned(items) => {
                    IntoIterInner::Owned(items.into_iter())
                }
            },
        }
    }
}

impl<'s, 'a, T: Decode<'a> + Clone> IntoIterator for &'s StructArray<'a, T> {
    type Item = Cow<'s, T>;
    type IntoIter = Iter<'s, 'a, T>;

    fn into_iter(self) -> Iter<'s, 'a, T> {
        self.iter()
    }
}

impl<T> Default for StructArray<'_, T> {
    fn default() -> Self {
        StructArray::new()
    }
}

impl<T> Default for Repr<'_, T> {
    fn default() -> Self {
        Repr::Owned(Vec::new())
    }
}

impl<T: Clone> Clone for StructArray<'_, T> {
    fn clone(&self) -> Self {
        StructArray {
            repr: match &self.repr {
                Repr::Wire {
                    bytes,
                    count,
                    version,
                    canonical,
                } => Repr::Wire {
                    bytes,
                    count: *count,
                    version: *version,
                    canonical: *canonical,
                },
                Repr::Decoded {
                    items,
                    bytes,
                    version,
                    canonical,
                } => Repr::Decoded {
                    items: items.clone(),
                    bytes,
                    version: *version,
                    canonical: *canonical,
                },
                Repr::Owned(items) => Repr::Owned(items.clone()),
            },
        }
    }
}

impl<T> From<Vec<T>> for StructArray<'_, T> {
    fn from(items: Vec<T>) -> Self {
        StructArray {
            repr: Repr::Owned(items),
        }
    }
}

impl<T> FromIterator<T> for StructArray<'_, T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Vec::from_iter(iter).into()
    }
}

/// Arrays are equal when their elements are, whichever form each is in.
impl<'a, T: Decode<'a> + Clone + PartialEq> PartialEq for StructArray<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        if let (Some(mine), Some(theirs)) = (self.wire(), other.wire()) {
            if mine == theirs {
                return true;
            }
        }
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, T: Decode<'a> + Clone + fmt::Debug> fmt::Debug for StructArray<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::error::DecodeError;

    /// A two-field struct for the tests: an int8 and an int16.
    #[derive(Debug, Clone, PartialEq)]
    struct Pair(i8, i16);

    impl<'a> Decode<'a> for Pair {
        fn decode_from(reader: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
            Ok(Pair(reader.read_i8()?, reader.read_i16()?))
        }
    }

    #[test]
    fn decoded_arrays_equal_built_ones_and_iterate_alike() {
        let wire = [1, 0, 2, 3, 0, 4];
        let decoded = StructArray::<Pair>::from_checked_wire(&wire, 2, 0, true);
        let built: StructArray<Pair> = vec![Pair(1, 2), Pair(3, 4)].into();
        assert_eq!(decoded, built);
        assert_eq!(decoded.len(), 2);
        assert_eq!(decoded.get(1).as_deref(), Some(&Pair(3, 4)));
        assert_eq!(decoded.get(2), None);
        assert_eq!(decoded.wire(), Some((&wire[..], 0)));
        assert_eq!(built.wire(), None);
        assert!(decoded.encodes_by_copy(0));
        assert!(!decoded.encodes_by_copy(1));
        assert!(!built.encodes_by_copy(0));
        assert_eq!(decoded.clone().into_vec(), vec![Pair(1, 2), Pair(3, 4)]);
        assert_ne!(decoded, vec![Pair(1, 2)].into());
        assert_ne!(decoded, vec![Pair(1, 2), Pair(3, 5)].into());
    }

    /// Validates like [`Pair`] but cannot decode: the disagreement a
    /// checked array must never hide.
    #[derive(Debug, Clone, PartialEq)]
    struct Liar;

    impl<'a> Decode<'a> for Liar {
        fn decode_from(reader: &mut Reader<'a>, _version: i16) -> Result<Self, DecodeError> {
            Err(reader.error(crate::runtime::DecodeErrorKind::UnexpectedNull))
        }
    }

    #[test]
    #[should_panic(expected = "bug in kafka-wire: a checked struct array element failed")]
    fn an_element_that_does_not_decode_is_never_silently_dropped() {
        // Two elements promised: iteration must not quietly end after none.
        let wire = [1, 0, 2, 3, 0, 4];
        let array = StructArray::<Liar>::from_checked_wire(&wire, 2, 0, true);
        assert_eq!(array.len(), 2);
        let _ = array.iter().count();
    }

    #[test]
    fn changing_a_decoded_array_decodes_it_first() {
        let wire = [1, 0, 2];
        let mut array = StructArray::<Pair>::from_checked_wire(&wire, 1, 0, true);
        array.push(Pair(5, 6));
        assert_eq!(array.wire(), None);
        assert_eq!(array.as_slice(), Some(&[Pair(1, 2), Pair(5, 6)][..]));
    }
}
