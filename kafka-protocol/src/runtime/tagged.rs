//! Tagged fields the schema does not know, kept so they survive a round trip.

use std::borrow::Cow;

use bytes::BufMut;

use super::error::{EncodeError, EncodeErrorKind};
use super::varint::{put_uvarint, uvarint_len};
use super::write::{put_tag_header, tagged_field_len};

/// A tagged field whose tag the schema does not know: its tag and raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawTaggedField<'a> {
    /// The tag.
    pub tag: u32,
    /// The field's bytes, without the tag and size.
    pub data: Cow<'a, [u8]>,
}

impl RawTaggedField<'_> {
    /// Detaches the field from the input it borrows.
    pub fn into_owned(self) -> RawTaggedField<'static> {
        RawTaggedField {
            tag: self.tag,
            data: Cow::Owned(self.data.into_owned()),
        }
    }

    /// The field's encoded size, header included.
    pub fn encoded_len(&self) -> usize {
        tagged_field_len(self.tag, self.data.len())
    }
}

/// The unknown tagged fields of one struct, kept in tag order.
///
/// Most structs have none, so the list takes one pointer when empty and
/// allocates only when a field arrives.
#[derive(Debug, Clone, Default, Eq, Hash)]
// A boxed `Vec` is one pointer wide where a `Vec` takes three: every
// generated struct carries this list, and almost all are empty.
#[allow(clippy::box_collection)]
pub struct UnknownTaggedFields<'a>(Option<Box<Vec<RawTaggedField<'a>>>>);

impl<'a> UnknownTaggedFields<'a> {
    /// An empty list.
    pub const fn new() -> Self {
        UnknownTaggedFields(None)
    }

    /// The fields, in tag order.
    #[inline]
    pub fn as_slice(&self) -> &[RawTaggedField<'a>] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Adds a field at its place in tag order, after any field with the
    /// same tag. Adding fields in ascending order costs nothing extra.
    pub fn insert(&mut self, field: RawTaggedField<'a>) {
        let fields = self.0.get_or_insert_with(Box::default);
        if fields.last().is_none_or(|last| last.tag <= field.tag) {
            fields.push(field);
        } else {
            let at = fields.partition_point(|f| f.tag <= field.tag);
            fields.insert(at, field);
        }
    }

    /// Adds many fields, in any order, sorting once.
    pub fn extend(&mut self, new: Vec<RawTaggedField<'a>>) {
        if new.is_empty() {
            return;
        }
        let fields = self.0.get_or_insert_with(Box::default);
        fields.extend(new);
        fields.sort_by_key(|f| f.tag);
    }

    /// Detaches the fields from the input they borrow.
    pub fn into_owned(self) -> UnknownTaggedFields<'static> {
        UnknownTaggedFields(
            self.0.map(|fields| {
                Box::new(fields.into_iter().map(RawTaggedField::into_owned).collect())
            }),
        )
    }
}

impl<'a> std::ops::Deref for UnknownTaggedFields<'a> {
    type Target = [RawTaggedField<'a>];

    #[inline]
    fn deref(&self) -> &Self::Target {
        self.as_slice()
    }
}

impl PartialEq for UnknownTaggedFields<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<'a> From<Vec<RawTaggedField<'a>>> for UnknownTaggedFields<'a> {
    /// Takes the fields in any order; they are kept in tag order.
    fn from(mut fields: Vec<RawTaggedField<'a>>) -> Self {
        if fields.is_empty() {
            return UnknownTaggedFields::new();
        }
        fields.sort_by_key(|f| f.tag);
        UnknownTaggedFields(Some(Box::new(fields)))
    }
}

/// Writes the tagged-field section of a struct with no known tagged fields:
/// the count, then the unknown fields.
#[inline(always)]
pub fn put_unknown_tagged_fields<B: BufMut>(
    buf: &mut B,
    unknown: &[RawTaggedField<'_>],
) -> Result<(), EncodeError> {
    // Almost every section is empty: a single zero count.
    if unknown.is_empty() {
        buf.put_u8(0);
        return Ok(());
    }
    put_unknown_tagged_field_list(buf, unknown)
}

#[cold]
#[inline(never)]
fn put_unknown_tagged_field_list<B: BufMut>(
    buf: &mut B,
    unknown: &[RawTaggedField<'_>],
) -> Result<(), EncodeError> {
    let writer = TaggedFieldWriter::new(unknown)?;
    put_uvarint(buf, unknown.len() as u32);
    writer.finish(buf);
    Ok(())
}

/// The size of the tagged-field section of a struct with no known tagged
/// fields.
#[inline(always)]
pub fn unknown_tagged_section_len(unknown: &[RawTaggedField<'_>]) -> usize {
    if unknown.is_empty() {
        1
    } else {
        unknown_tagged_field_list_len(unknown)
    }
}

#[cold]
#[inline(never)]
fn unknown_tagged_field_list_len(unknown: &[RawTaggedField<'_>]) -> usize {
    uvarint_len(unknown.len() as u32) + unknown_tagged_fields_len(unknown)
}

/// Fails when a struct encoded at a `version` without a tagged-field section
/// (a non-flexible version) holds unknown tagged fields, which that version
/// cannot carry: dropping them silently would lose data. Kafka's generated
/// code refuses the same way.
#[inline(always)]
pub fn refuse_unknown_tagged_fields(
    unknown: &[RawTaggedField<'_>],
    version: i16,
) -> Result<(), EncodeError> {
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(EncodeError::new(EncodeErrorKind::TaggedFieldsNotInVersion(
            version,
        )))
    }
}

/// Writes a struct's unknown tagged fields merged, in ascending tag order,
/// with the known ones the generated code writes between them.
#[derive(Debug)]
pub struct TaggedFieldWriter<'f, 'a> {
    remaining: Cow<'f, [RawTaggedField<'a>]>,
    next: usize,
}

impl<'f, 'a> TaggedFieldWriter<'f, 'a> {
    /// Prepares to write `unknown`, sorting a copy only if it is out of order.
    /// Fails when `unknown` repeats a tag.
    #[inline]
    pub fn new(unknown: &'f [RawTaggedField<'a>]) -> Result<Self, EncodeError> {
        let sorted = unknown.windows(2).all(|w| w[0].tag < w[1].tag);
        let remaining = if sorted {
            Cow::Borrowed(unknown)
        } else {
            let mut copy = unknown.to_vec();
            copy.sort_by_key(|f| f.tag);
            if let Some(w) = copy.windows(2).find(|w| w[0].tag == w[1].tag) {
                return Err(EncodeError::new(EncodeErrorKind::DuplicateTag(w[0].tag)));
            }
            Cow::Owned(copy)
        };
        Ok(TaggedFieldWriter { remaining, next: 0 })
    }

    /// Writes every unknown field whose tag is below `tag`, then checks that
    /// `tag` itself, which is about to be written, is not also unknown.
    pub fn write_before<B: BufMut>(
        &mut self,
        buf: &mut B,
        tag: u32,
        known_present: bool,
    ) -> Result<(), EncodeError> {
        while let Some(field) = self.remaining.get(self.next) {
            if field.tag > tag || (field.tag == tag && !known_present) {
                break;
            }
            if field.tag == tag {
                return Err(EncodeError::new(EncodeErrorKind::DuplicateTag(tag)));
            }
            put_tag_header(buf, field.tag, field.data.len());
            buf.put_slice(&field.data);
            self.next += 1;
        }
        Ok(())
    }

    /// Writes the unknown fields that are left.
    #[inline]
    pub fn finish<B: BufMut>(self, buf: &mut B) {
        for field in &self.remaining[self.next..] {
            put_tag_header(buf, field.tag, field.data.len());
            buf.put_slice(&field.data);
        }
    }
}

/// The encoded size of unknown tagged fields, headers included.
#[inline]
pub fn unknown_tagged_fields_len(unknown: &[RawTaggedField<'_>]) -> usize {
    unknown.iter().map(RawTaggedField::encoded_len).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(tag: u32, byte: u8) -> RawTaggedField<'static> {
        RawTaggedField {
            tag,
            data: Cow::Owned(vec![byte]),
        }
    }

    #[test]
    fn merges_in_tag_order() {
        let unknown = [field(7, 0xbb), field(1, 0xaa)];
        let mut buf = Vec::new();
        let mut writer = TaggedFieldWriter::new(&unknown).unwrap_or_else(|e| panic!("{e}"));
        assert!(writer.write_before(&mut buf, 3, true).is_ok());
        buf.extend_from_slice(&[3, 1, 0xcc]);
        writer.finish(&mut buf);
        assert_eq!(buf, [1, 1, 0xaa, 3, 1, 0xcc, 7, 1, 0xbb]);
    }

    #[test]
    fn rejects_unknown_field_reusing_a_known_tag() {
        let unknown = [field(3, 0xaa)];
        let mut writer = TaggedFieldWriter::new(&unknown).unwrap_or_else(|e| panic!("{e}"));
        assert!(writer.write_before(&mut Vec::new(), 3, true).is_err());
        let dup = [field(3, 0), field(3, 1), field(1, 0)];
        assert!(TaggedFieldWriter::new(&dup).is_err());
    }
}
