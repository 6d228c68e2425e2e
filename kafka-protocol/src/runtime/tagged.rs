//! Tagged fields the schema does not know, kept so they survive a round trip.

use std::borrow::Cow;

use bytes::BufMut;

use super::error::{EncodeError, EncodeErrorKind};
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
    pub fn finish<B: BufMut>(self, buf: &mut B) {
        for field in &self.remaining[self.next..] {
            put_tag_header(buf, field.tag, field.data.len());
            buf.put_slice(&field.data);
        }
    }
}

/// The encoded size of unknown tagged fields, headers included.
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
