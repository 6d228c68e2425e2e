//! Writing an array of structs and measuring its encoded size: copying its
//! wire bytes when they are what encoding would write, or encoding its
//! elements from its `Vec` or from its checked wire bytes.

use super::iter::{decode_checked, CheckedElements};
use super::{StructArray, WireOrigin};
use crate::runtime::error::EncodeError;
use crate::runtime::length::array_len_len;
use crate::runtime::message::{Decode, Encode};
use crate::runtime::reader::Reader;
use crate::runtime::writer::Writer;

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

    /// True when encoding the array at `version` copies its wire bytes:
    /// it came from the wire at that version, has not been changed, and its
    /// bytes are in the one form the encoder writes (no bool byte other than
    /// 0 and 1, no redundant varint bytes, tagged fields in order and none
    /// known to this schema; see [`Reader::is_canonical`]). Otherwise each
    /// element is encoded.
    pub fn encodes_by_copy(&self, version: i16) -> bool {
        matches!(self.element_source(version), ElementSource::Copy(_))
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
