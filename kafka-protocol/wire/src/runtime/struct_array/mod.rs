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
//!
//! The module is split by job: this file holds the container and its
//! forms; `read` checks or decodes an array from a [`Reader`], `iter`
//! hands its elements out, `write` encodes it and measures its encoded
//! size, and `checks` (debug builds only) cross-checks decoding against
//! validation.
//!
//! [`Decode::HOLDS_STRUCT_ARRAYS`]: super::Decode::HOLDS_STRUCT_ARRAYS
//! [`Decode::validate_from`]: super::Decode::validate_from
//! [`Cow::Owned`]: std::borrow::Cow::Owned
//! [`Reader::new`]: super::Reader::new
//! [`Reader`]: super::Reader

use super::element_vec::ElementVec;

#[cfg(debug_assertions)]
mod checks;
mod iter;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use iter::{IntoIter, Iter};
pub use write::{nullable_struct_array_len, struct_array_len};

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
///
/// Dropping an array calls code compiled where its `Vec` was filled (see
/// `ElementVec`): with the `precompile` feature, a program that drops
/// decoded messages compiles no drop of their nested structs. The drop
/// check sees an array as it sees a `Vec<T>`: elements whose own `Drop`
/// reads a borrow may not outlive it.
///
/// ```compile_fail,E0597
/// use kafka_wire::runtime::StructArray;
///
/// struct Reads<'s>(&'s str);
/// impl Drop for Reads<'_> {
///     fn drop(&mut self) {
///         println!("{}", self.0);
///     }
/// }
///
/// let array: StructArray<'_, Reads<'_>>;
/// {
///     let text = String::from("gone before the array is dropped");
///     array = StructArray::from(vec![Reads(&text)]);
/// }
/// ```
///
/// [`Decode::HOLDS_STRUCT_ARRAYS`]: super::Decode::HOLDS_STRUCT_ARRAYS
/// [`Reader::new`]: super::Reader::new
/// [`Cow`]: std::borrow::Cow
#[derive(Clone)]
pub struct StructArray<'a, T> {
    /// The elements; empty when `origin` says they are kept as wire bytes
    /// only.
    items: ElementVec<T>,
    /// The bytes the elements were read from, until the array is changed.
    origin: Option<WireOrigin<'a>>,
}

/// The wire bytes an array of structs was read from. It does not depend on
/// the element type, so the code that looks at it (whether to copy the
/// bytes, how to walk them) is compiled once, not once per element type.
#[derive(Clone, Copy)]
struct WireOrigin<'a> {
    /// The elements' bytes, after the count.
    bytes: &'a [u8],
    /// The number of elements.
    count: u32,
    /// The version they were read at.
    version: i16,
    /// True when encoding the elements at `version` gives back `bytes`.
    canonical: bool,
    /// True when the elements were checked and not decoded: the array's
    /// `Vec` is empty, and each element is decoded when read.
    bytes_only: bool,
}

impl<'a> WireOrigin<'a> {
    /// The bytes that encoding the elements at `version` writes, when they
    /// are these.
    #[inline]
    fn bytes_to_copy(self, version: i16) -> Option<&'a [u8]> {
        (self.canonical && self.version == version).then_some(self.bytes)
    }
}

impl<'a, T> StructArray<'a, T> {
    /// An empty array.
    pub const fn new() -> Self {
        StructArray {
            items: ElementVec::new(),
            origin: None,
        }
    }

    /// The array of no elements read at `version`, as the reader keeps it.
    #[inline]
    fn empty_from_wire(version: i16) -> Self {
        StructArray {
            items: ElementVec::new(),
            origin: Some(WireOrigin {
                bytes: &[],
                count: 0,
                version,
                canonical: true,
                bytes_only: true,
            }),
        }
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        match self.checked_only() {
            Some(origin) => origin.count as usize,
            None => self.items.len(),
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
        self.origin.map(|origin| (origin.bytes, origin.version))
    }

    /// The elements, unless they are kept as wire bytes only (see
    /// [`Decode::HOLDS_STRUCT_ARRAYS`] and [`Reader::new`]).
    ///
    /// [`Decode::HOLDS_STRUCT_ARRAYS`]: super::Decode::HOLDS_STRUCT_ARRAYS
    /// [`Reader::new`]: super::Reader::new
    pub fn as_slice(&self) -> Option<&[T]> {
        match self.checked_only() {
            Some(_) => None,
            None => Some(self.items.as_slice()),
        }
    }

    /// The origin of an array whose elements are kept as wire bytes only.
    #[inline]
    fn checked_only(&self) -> Option<WireOrigin<'a>> {
        match self.origin {
            Some(origin) if origin.bytes_only => Some(origin),
            _ => None,
        }
    }
}

/// An array of structs whose count has been read.
struct ArrayStart {
    count: usize,
    /// Where its elements start, in the reader's input.
    start: usize,
    /// Whether the reader was canonical before the array.
    canonical_before: bool,
}

impl<T> Default for StructArray<'_, T> {
    fn default() -> Self {
        StructArray::new()
    }
}

impl<T> From<Vec<T>> for StructArray<'_, T> {
    fn from(items: Vec<T>) -> Self {
        StructArray {
            items: ElementVec::from_vec(items),
            origin: None,
        }
    }
}

impl<T> FromIterator<T> for StructArray<'_, T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Vec::from_iter(iter).into()
    }
}
