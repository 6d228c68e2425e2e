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
#[cfg(debug_assertions)]
use std::cell::Cell;
use std::fmt;

use super::element_vec::ElementVec;
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::length::array_len_len;
use super::message::{Decode, Encode};
use super::reader::Reader;
use super::writer::Writer;

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
    pub fn as_slice(&self) -> Option<&[T]> {
        match self.checked_only() {
            Some(_) => None,
            None => Some(self.items.as_slice()),
        }
    }

    /// True when encoding the array at `version` copies its wire bytes:
    /// it came from the wire at that version, has not been changed, and its
    /// bytes are in the one form the encoder writes (no bool byte other than
    /// 0 and 1, no redundant varint bytes, tagged fields in order and none
    /// known to this schema; see [`Reader::is_canonical`]). Otherwise each
    /// element is encoded.
    pub fn encodes_by_copy(&self, version: i16) -> bool {
        matches!(self.element_source(version), ElementSource::Copy(_))
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
struct CheckedElements<'a> {
    reader: Reader<'a>,
    remaining: u32,
    version: i16,
}

impl<'a> CheckedElements<'a> {
    fn new(origin: WireOrigin<'a>) -> Self {
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
    fn next_element(&mut self) -> Option<(&mut Reader<'a>, i16)> {
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
fn decode_checked<'a, T: Decode<'a>>(reader: &mut Reader<'a>, version: i16) -> T {
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

// ---------------------------------------------------------------------------
// Reading.

/// The debug self-checks' view of an element type: its `validate_from`,
/// and a decode that drops what it built, as plain function pointers, so
/// that the checks are compiled once rather than once per element type.
#[cfg(debug_assertions)]
#[derive(Clone, Copy)]
struct ElementChecks<'a> {
    validate: fn(&mut Reader<'a>, i16) -> Result<(), DecodeError>,
    decode: fn(&mut Reader<'a>, i16) -> Result<(), DecodeError>,
}

#[cfg(debug_assertions)]
impl<'a> ElementChecks<'a> {
    fn of<T: Decode<'a>>() -> Self {
        ElementChecks {
            validate: T::validate_from,
            decode: |reader, version| match T::decode_from(reader, version) {
                Ok(_decoded) => Ok(()),
                Err(e) => Err(e),
            },
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

impl<'a> Reader<'a> {
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
        let Some(array) = self.begin_struct_array(compact)? else {
            return Ok(None);
        };
        if array.count == 0 {
            // Nothing to check or decode: the reader stays as canonical as
            // it was.
            self.canonical = array.canonical_before;
            return Ok(Some(StructArray::empty_from_wire(version)));
        }
        // A constant test first: for the many element types that hold no
        // arrays of structs, the branch that decodes into a `Vec` is then
        // never instantiated at all, in debug builds as in release ones.
        if T::HOLDS_STRUCT_ARRAYS && self.take_heap_for_vec(array.count, size_of::<T>()) {
            let items = self.decode_elements::<T>(array.count, version)?;
            let origin = self.end_struct_array(&array, version, false);
            #[cfg(debug_assertions)]
            self.debug_check_validates(&array, version, origin.canonical, ElementChecks::of::<T>());
            return Ok(Some(StructArray {
                items: ElementVec::from_vec(items),
                origin: Some(origin),
            }));
        }
        self.validate_elements::<T>(array.count, version)?;
        Ok(Some(StructArray {
            items: ElementVec::new(),
            origin: Some(self.end_struct_array(&array, version, true)),
        }))
    }

    /// Checks an array of structs that may not be null and builds nothing,
    /// for `validate_from`: it accepts and rejects exactly what
    /// [`Reader::read_struct_array`] does, with the same errors, without an
    /// array to return and drop.
    #[inline]
    pub fn skip_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<(), DecodeError> {
        let start = self.offset();
        match self.read_array_len(compact, 1)? {
            Some(0) => Ok(()),
            Some(count) => self.validate_elements::<T>(count, version),
            None => Err(DecodeError::new(start, DecodeErrorKind::UnexpectedNull)),
        }
    }

    /// Checks an array of structs that may be null and builds nothing, as
    /// [`Reader::read_nullable_struct_array`] would accept or reject it.
    #[inline]
    pub fn skip_nullable_struct_array<T: Decode<'a>>(
        &mut self,
        compact: bool,
        version: i16,
    ) -> Result<(), DecodeError> {
        match self.read_array_len(compact, 1)? {
            Some(0) | None => Ok(()),
            Some(count) => self.validate_elements::<T>(count, version),
        }
    }

    /// Reads the count of an array of structs: `None` for null.
    #[inline]
    fn begin_struct_array(&mut self, compact: bool) -> Result<Option<ArrayStart>, DecodeError> {
        let Some(count) = self.read_array_len(compact, 1)? else {
            return Ok(None);
        };
        Ok(Some(ArrayStart {
            count,
            start: self.position(),
            canonical_before: std::mem::replace(&mut self.canonical, true),
        }))
    }

    /// Whether an array of `count` elements of `element_size` bytes each,
    /// elements that hold arrays of structs, is decoded into a `Vec`, taking
    /// that much of the heap budget if so: when there are two or more of
    /// them (a single element is worth no allocation: reading it checks its
    /// nested arrays once more, once) and the budget has room.
    fn take_heap_for_vec(&mut self, count: usize, element_size: usize) -> bool {
        let heap = count.saturating_mul(element_size);
        let fits = count > 1 && heap <= self.heap_budget;
        if fits {
            self.heap_budget -= heap;
        }
        fits
    }

    /// Ends an array of structs read at `version` since `array` began: where
    /// its elements' bytes are, and whether they are canonical. The reader
    /// is canonical from here when it was before the array and the array is.
    #[inline]
    fn end_struct_array(
        &mut self,
        array: &ArrayStart,
        version: i16,
        bytes_only: bool,
    ) -> WireOrigin<'a> {
        let canonical = self.canonical;
        self.canonical = array.canonical_before && canonical;
        WireOrigin {
            bytes: &self.input[array.start..self.position()],
            // A count fits in 32 bits: it came from an int32 or a uvarint.
            count: u32::try_from(array.count).unwrap_or(u32::MAX),
            version,
            canonical,
            bytes_only,
        }
    }

    /// Decodes `count` elements into a `Vec` of exactly that capacity.
    /// Never inlined, like [`Reader::validate_elements`], so that each
    /// element type's decoder is compiled into one loop rather than into
    /// every decoder of an enclosing struct; it runs once per array.
    #[inline(never)]
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
    /// kept as wire bytes too, whatever budget is left. Generic, unlike the
    /// other loops over elements, because it is the hot loop of decoding:
    /// each element type's `validate_from` is inlined into it.
    ///
    /// Never inlined itself: it is compiled once per element type, where
    /// inlining put a copy of the loop, and of every element check inlined
    /// into it, in each decoder and validator of an enclosing struct. In a
    /// consumer that compiles its messages (kafka-wire without
    /// `precompile`), that halved the time of rebuilding a program that
    /// decodes one MetadataResponse, for about one call per array decoded.
    #[inline(never)]
    fn validate_elements<T: Decode<'a>>(
        &mut self,
        count: usize,
        version: i16,
    ) -> Result<(), DecodeError> {
        let budget = std::mem::take(&mut self.heap_budget);
        let mut result = Ok(());
        for index in 0..count {
            #[cfg(debug_assertions)]
            let element_start = self.position();
            if let Err(e) = T::validate_from(self, version) {
                result = Err(e.at_index(index));
                break;
            }
            #[cfg(debug_assertions)]
            self.debug_check_decodes(element_start, version, ElementChecks::of::<T>());
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
            unread: self.input.get(position..).unwrap_or_default(),
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
    fn debug_check_validates(
        &self,
        array: &ArrayStart,
        version: i16,
        canonical: bool,
        checks: ElementChecks<'a>,
    ) {
        if RECHECKING.with(Cell::get) {
            return;
        }
        let start = array.start;
        let mut again = self.rechecker(start);
        let validated = {
            let _rechecking = Rechecking::start();
            (0..array.count).try_for_each(|_| (checks.validate)(&mut again, version))
        };
        debug_assert!(
            validated.is_ok()
                && again.position() == self.position()
                && again.canonical == canonical,
            "decode_from and validate_from disagree at offset {}: {:?}, {} bytes against {}, \
             canonical {} against {}",
            self.base + start,
            validated.err(),
            again.position() - start,
            self.position() - start,
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
    fn debug_check_decodes(&self, element_start: usize, version: i16, checks: ElementChecks<'a>) {
        if RECHECKING.with(Cell::get) {
            return;
        }
        let mut again = self.rechecker(element_start);
        let decoded = {
            let _rechecking = Rechecking::start();
            (checks.decode)(&mut again, version)
        };
        debug_assert!(
            decoded.is_ok() && again.position() == self.position(),
            "validate_from and decode_from disagree at offset {}: {:?}, {} bytes against {}",
            self.base + element_start,
            decoded.err(),
            again.position() - element_start,
            self.position() - element_start,
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
        match self.read_nullable_struct_array(compact, version)? {
            Some(array) => Ok(array),
            None => Err(DecodeError::new(start, DecodeErrorKind::UnexpectedNull)),
        }
    }
}

// ---------------------------------------------------------------------------
// Writing and sizing.

impl Writer<'_> {
    /// Writes an array of structs, which may be null. A decoded array whose
    /// bytes are what its elements encode to at `version` is copied (see
    /// [`StructArray::encodes_by_copy`]); otherwise each element is encoded.
    ///
    /// An array that code built is its `Vec`, encoded in line. For one that
    /// came from the wire, everything but the loop over a `Vec`'s elements is
    /// `put_array_head`, compiled once for every element type.
    #[inline]
    pub fn put_nullable_struct_array<'a, T: Encode + Decode<'a> + Clone>(
        &mut self,
        items: Option<&StructArray<'a, T>>,
        compact: bool,
        version: i16,
    ) -> Result<(), EncodeError> {
        let Some(items) = items else {
            return self.put_array_len(None, compact);
        };
        let encode_vec = match items.origin {
            None => {
                self.put_array_len(Some(items.items.len()), compact)?;
                true
            }
            Some(_) => self.put_array_head(items.head(), compact, version)?,
        };
        if encode_vec {
            self.put_elements(items.items.as_slice(), version)
        } else {
            Ok(())
        }
    }

    /// Writes the count of an array of structs and, unless they are to be
    /// encoded from its `Vec`, its elements: copied from its wire bytes, or
    /// each checked element re-encoded. True when the caller is still to encode
    /// the `Vec`, the one part that depends on the element type.
    fn put_array_head(
        &mut self,
        head: ArrayHead<'_>,
        compact: bool,
        version: i16,
    ) -> Result<bool, EncodeError> {
        self.put_array_len(Some(head.count), compact)?;
        match element_source(head.origin, version) {
            ElementSource::Copy(bytes) => {
                self.put_slice(bytes);
                Ok(false)
            }
            ElementSource::Vec => Ok(true),
            ElementSource::Checked(origin) => {
                reencode_checked(Some(self), origin, version, head.reencode).map(|_| false)
            }
        }
    }

    /// Encodes each element, naming the index of a failing one.
    #[inline]
    #[allow(clippy::explicit_counter_loop)]
    fn put_elements<T: Encode>(&mut self, items: &[T], version: i16) -> Result<(), EncodeError> {
        // A counter of its own rather than `enumerate()`: the loop then compiles
        // to fewer instructions per element (`benches/instructions`: 2-5% of
        // Metadata's and ApiVersions' encode).
        let mut index = 0;
        for item in items {
            if let Err(e) = item.encode_to(self, version) {
                return Err(e.at_index(index));
            }
            index += 1;
        }
        Ok(())
    }

    /// Writes an array of structs.
    #[inline]
    pub fn put_struct_array<'a, T: Encode + Decode<'a> + Clone>(
        &mut self,
        items: &StructArray<'a, T>,
        compact: bool,
        version: i16,
    ) -> Result<(), EncodeError> {
        self.put_nullable_struct_array(Some(items), compact, version)
    }
}

/// What encoding an array of structs needs to know that does not depend on
/// its element type.
#[derive(Clone, Copy)]
struct ArrayHead<'a> {
    /// The number of elements, in whichever form they are
    /// ([`StructArray::len`]).
    count: usize,
    /// The wire bytes it came from, if it did.
    origin: Option<WireOrigin<'a>>,
    /// Re-encodes one element kept as checked wire bytes.
    reencode: ReencodeElement<'a>,
}

/// Where encoding an array at some version takes its elements from.
enum ElementSource<'a> {
    /// Its wire bytes, as they are (see [`StructArray::encodes_by_copy`]).
    Copy(&'a [u8]),
    /// Its `Vec`, element by element.
    Vec,
    /// Its checked wire bytes, each element decoded and encoded again.
    Checked(WireOrigin<'a>),
}

/// Where encoding an array that came from `origin` (when it came from the
/// wire) takes its elements from at `version`.
#[inline]
fn element_source(origin: Option<WireOrigin<'_>>, version: i16) -> ElementSource<'_> {
    match origin {
        Some(origin) => match origin.bytes_to_copy(version) {
            Some(bytes) => ElementSource::Copy(bytes),
            None if origin.bytes_only => ElementSource::Checked(origin),
            None => ElementSource::Vec,
        },
        None => ElementSource::Vec,
    }
}

impl<'a, T> StructArray<'a, T> {
    /// Where encoding the array at `version` takes its elements from.
    #[inline]
    fn element_source(&self, version: i16) -> ElementSource<'a> {
        element_source(self.origin, version)
    }
}

impl<'a, T: Decode<'a> + Encode> StructArray<'a, T> {
    /// The array as the encoding code that does not depend on `T` sees it.
    #[inline]
    fn head(&self) -> ArrayHead<'a> {
        ArrayHead {
            count: self.len(),
            origin: self.origin,
            reencode: reencode_element::<T>,
        }
    }
}

/// Decodes one checked element at the version it was read at, then encodes
/// it at `version` into the writer, or, without one, gives its encoded
/// size: one function per element type for both, which share the decode.
type ReencodeElement<'a> =
    fn(&mut Reader<'a>, i16, Option<&mut Writer<'_>>, i16) -> Result<usize, EncodeError>;

fn reencode_element<'a, T: Decode<'a> + Encode>(
    reader: &mut Reader<'a>,
    read_at: i16,
    buf: Option<&mut Writer<'_>>,
    version: i16,
) -> Result<usize, EncodeError> {
    let element = decode_checked::<T>(reader, read_at);
    match buf {
        Some(buf) => match element.encode_to(buf, version) {
            Ok(()) => Ok(0),
            Err(e) => Err(e),
        },
        None => Ok(element.encoded_len(version)),
    }
}

/// Decodes each checked element of `origin` and encodes it at `version`
/// into `buf`, or, without one, sums their encoded sizes.
#[inline(never)]
fn reencode_checked<'a>(
    mut buf: Option<&mut Writer<'_>>,
    origin: WireOrigin<'a>,
    version: i16,
    reencode: ReencodeElement<'a>,
) -> Result<usize, EncodeError> {
    let mut elements = CheckedElements::new(origin);
    let mut index = 0;
    let mut len = 0;
    while let Some((reader, read_at)) = elements.next_element() {
        match reencode(reader, read_at, buf.as_deref_mut(), version) {
            Ok(element_len) => len += element_len,
            Err(e) => return Err(e.at_index(index)),
        }
        index += 1;
    }
    Ok(len)
}

/// The encoded size of an array of structs, which may be null. As with
/// [`Writer::put_nullable_struct_array`], a built array is summed in line, and
/// only the sum over a `Vec`'s elements depends on the element type.
#[inline]
pub fn nullable_struct_array_len<'a, T: Encode + Decode<'a> + Clone>(
    items: Option<&StructArray<'a, T>>,
    compact: bool,
    version: i16,
) -> usize {
    let Some(items) = items else {
        return array_len_len(None, compact);
    };
    let (mut len, sum_vec) = match items.origin {
        None => (array_len_len(Some(items.items.len()), compact), true),
        Some(_) => array_head_len(items.head(), compact, version),
    };
    if sum_vec {
        for item in items.items.as_slice() {
            len += item.encoded_len(version);
        }
    }
    len
}

/// The encoded size of an array of structs: all of it, or, when the second
/// value is true, all but its `Vec`'s elements, which the caller adds.
fn array_head_len(head: ArrayHead<'_>, compact: bool, version: i16) -> (usize, bool) {
    let count_len = array_len_len(Some(head.count), compact);
    match element_source(head.origin, version) {
        ElementSource::Copy(bytes) => (count_len + bytes.len(), false),
        ElementSource::Vec => (count_len, true),
        // Measuring writes nothing, so it cannot fail.
        ElementSource::Checked(origin) => {
            let elements = reencode_checked(None, origin, version, head.reencode);
            (count_len + elements.unwrap_or_default(), false)
        }
    }
}

/// The encoded size of an array of structs.
#[inline]
pub fn struct_array_len<'a, T: Encode + Decode<'a> + Clone>(
    items: &StructArray<'a, T>,
    compact: bool,
    version: i16,
) -> usize {
    nullable_struct_array_len(Some(items), compact, version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::error::DecodeError;

    impl<'a, T> StructArray<'a, T> {
        /// An array of `count` elements kept as the checked bytes `wire`,
        /// read at version 0, as the reader makes them.
        fn from_checked_wire(wire: &'a [u8], count: u32) -> Self {
            StructArray {
                items: ElementVec::new(),
                origin: Some(WireOrigin {
                    bytes: wire,
                    count,
                    version: 0,
                    canonical: true,
                    bytes_only: true,
                }),
            }
        }
    }

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
        let decoded = StructArray::<Pair>::from_checked_wire(&wire, 2);
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
        let array = StructArray::<Liar>::from_checked_wire(&wire, 2);
        assert_eq!(array.len(), 2);
        let _ = array.iter().count();
    }

    #[test]
    fn changing_a_decoded_array_decodes_it_first() {
        let wire = [1, 0, 2];
        let mut array = StructArray::<Pair>::from_checked_wire(&wire, 1);
        array.push(Pair(5, 6));
        assert_eq!(array.wire(), None);
        assert_eq!(array.as_slice(), Some(&[Pair(1, 2), Pair(5, 6)][..]));
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
}
