//! Handing out the elements of an array of structs in either form:
//! borrowed from its `Vec`, or decoded one by one from checked wire bytes.
//! Iteration, indexing, taking them as a `Vec`, and what is built on
//! iteration (equality, `Debug`).

use std::borrow::Cow;
use std::fmt;

use super::{StructArray, WireOrigin};
use crate::runtime::element_vec::ElementVec;
use crate::runtime::error::DecodeError;
use crate::runtime::message::Decode;
use crate::runtime::reader::Reader;

impl<'a, T: Decode<'a> + Clone> StructArray<'a, T> {
    /// The elements in order: borrowed from the `Vec`, or, for an array
    /// kept as wire bytes only, decoded one by one. It yields exactly
    /// [`len`](Self::len) elements: a checked element that failed to decode
    /// would be a bug in this crate, and panics rather than ending the
    /// iteration early.
    pub fn iter(&self) -> Iter<'_, 'a, T> {
        Iter {
            inner: match self.checked_only() {
                Some(origin) => IterInner::Wire(WireElements::new(origin)),
                None => IterInner::Owned(self.items.as_slice().iter()),
            },
        }
    }

    /// The element at `index`: an index into the `Vec`, except for an array
    /// kept as wire bytes only, which decodes the elements before it too.
    pub fn get(&self, index: usize) -> Option<Cow<'_, T>> {
        match self.checked_only() {
            Some(origin) => WireElements::new(origin).nth(index).map(Cow::Owned),
            None => self.items.as_slice().get(index).map(Cow::Borrowed),
        }
    }

    /// The elements as a `Vec` that can be changed. The array no longer
    /// remembers its wire bytes, so it then encodes element by element.
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if let Some(origin) = self.origin.take() {
            if origin.bytes_only {
                self.items = ElementVec::from_vec(WireElements::new(origin).collect());
            }
        }
        self.items.vec_mut()
    }

    /// Appends an element, decoding the array first when it came from the
    /// wire.
    pub fn push(&mut self, value: T) {
        self.to_mut().push(value);
    }

    /// The elements, decoded, in a `Vec`.
    pub fn into_vec(mut self) -> Vec<T> {
        match self.checked_only() {
            Some(origin) => WireElements::new(origin).collect(),
            None => self.items.take(),
        }
    }
}

impl<'a, T: Decode<'a> + Default> StructArray<'a, T> {
    /// Each element, decoded, through `f`, in a `Vec`: one loop over the
    /// wire bytes or over the `Vec`, whose elements are taken out with
    /// [`std::mem::take`] (generated structs all have defaults), which
    /// needs less code per element type than a `vec::IntoIter`.
    pub(crate) fn map_into_vec<U>(mut self, mut f: impl FnMut(T) -> U) -> Vec<U> {
        let mut mapped = Vec::with_capacity(self.len());
        match self.checked_only() {
            Some(origin) => {
                let mut elements = CheckedElements::new(origin);
                while let Some((reader, version)) = elements.next_element() {
                    mapped.push(f(decode_checked(reader, version)));
                }
            }
            None => {
                for item in self.items.as_mut_slice() {
                    mapped.push(f(std::mem::take(item)));
                }
            }
        }
        mapped
    }
}

/// A walk over the checked elements of an array kept as wire bytes; not
/// generic, so compiled once.
pub(super) struct CheckedElements<'a> {
    reader: Reader<'a>,
    remaining: u32,
    version: i16,
}

impl<'a> CheckedElements<'a> {
    pub(super) fn new(origin: WireOrigin<'a>) -> Self {
        CheckedElements {
            // No heap budget: arrays nested in these elements stay wire
            // bytes too, so that elements read one at a time stay small.
            reader: Reader::without_heap(origin.bytes),
            remaining: origin.count,
            version: origin.version,
        }
    }

    /// The reader at the next element and the version to read it at, or
    /// `None` after the last.
    #[inline]
    pub(super) fn next_element(&mut self) -> Option<(&mut Reader<'a>, i16)> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        Some((&mut self.reader, self.version))
    }
}

/// Decodes an element that passed `validate_from` at this version when its
/// array was read. Decoding depends on nothing else, so this succeeds.
/// Were it ever to fail, skipping the element would silently yield fewer
/// elements than `len()` promised: a bug in the generated code, so it is
/// reported as loudly as one, in every build.
#[inline]
pub(super) fn decode_checked<'a, T: Decode<'a>>(reader: &mut Reader<'a>, version: i16) -> T {
    match T::decode_from(reader, version) {
        Ok(element) => element,
        Err(error) => broken_promise(&error),
    }
}

/// Reports a checked element that does not decode: `validate_from` and
/// `decode_from` disagree, which is a bug in this crate, never a fault in
/// the input (every element was checked when the array was read).
#[cold]
#[inline(never)]
fn broken_promise(error: &DecodeError) -> ! {
    panic!("bug in kafka-wire: a checked struct array element failed to decode: {error}")
}

/// Decodes the elements of checked wire bytes one after another.
struct WireElements<'a, T> {
    elements: CheckedElements<'a>,
    element: std::marker::PhantomData<T>,
}

impl<'a, T> WireElements<'a, T> {
    fn new(origin: WireOrigin<'a>) -> Self {
        WireElements {
            elements: CheckedElements::new(origin),
            element: std::marker::PhantomData,
        }
    }
}

impl<'a, T: Decode<'a>> Iterator for WireElements<'a, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        let (reader, version) = self.elements.next_element()?;
        Some(decode_checked(reader, version))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = self.elements.remaining as usize;
        (remaining, Some(remaining))
    }
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

    fn into_iter(mut self) -> IntoIter<'a, T> {
        IntoIter {
            inner: match self.checked_only() {
                Some(origin) => IntoIterInner::Wire(WireElements::new(origin)),
                None => IntoIterInner::Owned(self.items.take().into_iter()),
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
