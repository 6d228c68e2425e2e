//! The tagged-field section of a flexible struct, read, written and sized
//! here: the fields the schema does not know, kept so that they survive a
//! round trip ([`UnknownTaggedFields`], [`RawTaggedField`]); the section's
//! count and the merge of known fields (which generated code reads and
//! writes through [`Reader::read_tagged_fields`] and [`TaggedFieldWriter`])
//! with the unknown ones in tag order; and the tagged forms of the known
//! fields' values (a tag header, a nullable struct's uvarint marker).

use std::borrow::Cow;
use std::fmt;

use super::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use super::reader::Reader;
use super::section_box::{Section, SectionBox};
use super::varint::{get_uvarint, put_uvarint, uvarint_len};
use super::writer::Writer;

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
/// They are kept in wire form, not as a list of [`RawTaggedField`]s: each
/// field's tag and size as shortest uvarints, then its bytes, field after
/// field in ascending tag order. So they take no more memory than they took
/// on the wire (a list entry would take 32 bytes for a field of 2), and when
/// the input already holds them in that form, as Kafka writes them, they are
/// borrowed from it and take none. [`UnknownTaggedFields::iter`] yields each
/// field as a [`RawTaggedField`].
///
/// Most structs have none: the list is then one null pointer.
#[derive(Clone, Default, Eq, Hash)]
pub struct UnknownTaggedFields<'a>(Option<SectionBox<'a>>);

/// One entry of a [`Section`]: its tag, and where its data and the whole
/// entry end.
struct Entry {
    tag: u32,
    data_start: usize,
    end: usize,
}

/// Reads the entry at `at` in `entries`, written by this module or checked
/// by the reader. `None` at the end, or where the bytes are not an entry.
fn entry_at(entries: &[u8], at: usize) -> Option<Entry> {
    let rest = entries.get(at..)?;
    let (tag, tag_len) = get_uvarint(rest).ok()?;
    let (size, size_len) = get_uvarint(rest.get(tag_len..)?).ok()?;
    let data_start = at + tag_len + size_len;
    let end = data_start.checked_add(size as usize)?;
    (end <= entries.len()).then_some(Entry {
        tag,
        data_start,
        end,
    })
}

/// Appends one entry in wire form.
fn put_entry(out: &mut Vec<u8>, tag: u32, data: &[u8]) {
    put_uvarint(out, tag);
    put_uvarint(out, data.len() as u32);
    out.extend_from_slice(data);
}

/// The entries of a [`Section`], decoded one by one.
///
/// The bytes were written by this module, or checked by the reader before
/// being kept, so every entry parses; were one not to, the iteration would
/// end early and silently, so that is reported as the bug it would be.
#[derive(Debug, Clone)]
pub struct UnknownTaggedFieldsIter<'s> {
    entries: &'s [u8],
    at: usize,
    left: usize,
}

impl<'s> Iterator for UnknownTaggedFieldsIter<'s> {
    type Item = RawTaggedField<'s>;

    fn next(&mut self) -> Option<RawTaggedField<'s>> {
        if self.left == 0 {
            return None;
        }
        let Some(entry) = entry_at(self.entries, self.at) else {
            panic!(
                "bug in kafka-wire: unknown tagged fields end {} field(s) early",
                self.left
            );
        };
        self.left -= 1;
        self.at = entry.end;
        Some(RawTaggedField {
            tag: entry.tag,
            data: Cow::Borrowed(&self.entries[entry.data_start..entry.end]),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for UnknownTaggedFieldsIter<'_> {}

impl<'a> UnknownTaggedFields<'a> {
    /// An empty list.
    pub const fn new() -> Self {
        UnknownTaggedFields(None)
    }

    /// Fields already in wire form: `count` entries, checked, with shortest
    /// uvarints and in ascending tag order. Only the reader creates these.
    pub(crate) fn from_checked_entries(entries: Cow<'a, [u8]>, count: usize) -> Self {
        if count == 0 {
            return UnknownTaggedFields::new();
        }
        UnknownTaggedFields(Some(SectionBox::new(Section { entries, count })))
    }

    /// The number of fields.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |section| section.get().count)
    }

    /// True when there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The fields in tag order, their bytes borrowed from the list.
    pub fn iter(&self) -> UnknownTaggedFieldsIter<'_> {
        UnknownTaggedFieldsIter {
            entries: self.wire_entries(),
            at: 0,
            left: self.len(),
        }
    }

    /// The fields' wire form: each field's tag, size and bytes, in tag
    /// order, without the count that starts a tagged-field section.
    #[inline]
    pub fn wire_entries(&self) -> &[u8] {
        self.0
            .as_ref()
            .map_or(&[], |section| &section.get().entries)
    }

    /// Adds a field at its place in tag order, after any field with the
    /// same tag. Copies the fields if they were borrowed.
    pub fn insert(&mut self, field: RawTaggedField<'_>) {
        let section = self
            .0
            .get_or_insert_with(|| {
                SectionBox::new(Section {
                    entries: Cow::Owned(Vec::new()),
                    count: 0,
                })
            })
            .get_mut();
        let mut at = 0;
        while let Some(entry) = entry_at(&section.entries, at) {
            if entry.tag > field.tag {
                break;
            }
            at = entry.end;
        }
        let mut encoded = Vec::with_capacity(field.encoded_len());
        put_entry(&mut encoded, field.tag, &field.data);
        section.entries.to_mut().splice(at..at, encoded);
        section.count += 1;
    }

    /// Adds many fields, in any order.
    pub fn extend(&mut self, new: Vec<RawTaggedField<'_>>) {
        if self.is_empty() {
            *self = UnknownTaggedFields::from(new).into_owned();
            return;
        }
        for field in new {
            self.insert(field);
        }
    }

    /// Detaches the fields from the input they borrow.
    pub fn into_owned(self) -> UnknownTaggedFields<'static> {
        UnknownTaggedFields(self.0.map(|section| {
            let section = section.into_inner();
            SectionBox::new(Section {
                entries: Cow::Owned(section.entries.into_owned()),
                count: section.count,
            })
        }))
    }

    /// The first tag that two fields share, if any (fields are in tag
    /// order, so they are next to each other).
    fn repeated_tag(&self) -> Option<u32> {
        let mut previous = None;
        for field in self.iter() {
            if previous == Some(field.tag) {
                return Some(field.tag);
            }
            previous = Some(field.tag);
        }
        None
    }
}

impl PartialEq for UnknownTaggedFields<'_> {
    /// Equal when they hold the same fields in the same order. Encoding
    /// compares every tagged struct field with its default this way, so the
    /// common case, two empty lists, compares two null pointers only.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => false,
        }
    }
}

impl fmt::Debug for UnknownTaggedFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'s, 'a> IntoIterator for &'s UnknownTaggedFields<'a> {
    type Item = RawTaggedField<'s>;
    type IntoIter = UnknownTaggedFieldsIter<'s>;

    fn into_iter(self) -> UnknownTaggedFieldsIter<'s> {
        self.iter()
    }
}

impl<'a> From<Vec<RawTaggedField<'a>>> for UnknownTaggedFields<'a> {
    /// Takes the fields in any order; they are kept in tag order (equal
    /// tags in the order given).
    fn from(mut fields: Vec<RawTaggedField<'a>>) -> Self {
        if fields.is_empty() {
            return UnknownTaggedFields::new();
        }
        fields.sort_by_key(|f| f.tag);
        let size = fields.iter().map(RawTaggedField::encoded_len).sum();
        let mut entries = Vec::with_capacity(size);
        for field in &fields {
            put_entry(&mut entries, field.tag, &field.data);
        }
        UnknownTaggedFields::from_checked_entries(Cow::Owned(entries), fields.len())
    }
}

impl Writer<'_> {
    /// Writes the tagged-field section of a struct with no known tagged fields:
    /// the count, then the unknown fields. Fails when two share a tag.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn put_unknown_tagged_section(
        &mut self,
        unknown: &UnknownTaggedFields<'_>,
    ) -> Result<(), EncodeError> {
        // Almost every section is empty: a single zero count.
        if unknown.is_empty() {
            self.put_u8(0);
            return Ok(());
        }
        self.put_unknown_tagged_field_list(unknown)
    }

    #[cold]
    #[inline(never)]
    fn put_unknown_tagged_field_list(
        &mut self,
        unknown: &UnknownTaggedFields<'_>,
    ) -> Result<(), EncodeError> {
        let writer = TaggedFieldWriter::new(unknown)?;
        self.put_uvarint(unknown.len() as u32);
        writer.finish(self);
        Ok(())
    }

    /// Writes a tagged field's header: its tag and its size.
    #[inline]
    pub fn put_tag_header(&mut self, tag: u32, size: usize) {
        self.put_uvarint(tag);
        self.put_uvarint(size as u32);
    }

    /// Writes a nullable struct inside a tagged field: a uvarint marker, 0 for
    /// null and 1 for present, then the struct.
    #[inline]
    pub fn put_tagged_nullable_struct<T>(
        &mut self,
        value: Option<&T>,
        write: impl FnOnce(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        match value {
            None => {
                self.put_u8(0);
                Ok(())
            }
            Some(v) => {
                self.put_u8(1);
                write(self, v)
            }
        }
    }
}

/// The size of the tagged-field section of a struct with no known tagged
/// fields.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub fn unknown_tagged_section_len(unknown: &UnknownTaggedFields<'_>) -> usize {
    if unknown.is_empty() {
        1
    } else {
        uvarint_len(unknown.len() as u32) + unknown_tagged_fields_len(unknown)
    }
}

/// Fails when a struct encoded at a `version` without a tagged-field section
/// (a non-flexible version) holds unknown tagged fields, which that version
/// cannot carry: dropping them silently would lose data. Kafka's generated
/// code refuses the same way.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub fn refuse_unknown_tagged_fields(
    unknown: &UnknownTaggedFields<'_>,
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
pub struct TaggedFieldWriter<'f> {
    /// The entries not yet written, in wire form.
    remaining: &'f [u8],
}

impl<'f> TaggedFieldWriter<'f> {
    /// Prepares to write `unknown`. Fails when `unknown` repeats a tag.
    ///
    /// Most structs have no unknown fields; for them this, every
    /// [`write_before`](Self::write_before) and [`finish`](Self::finish)
    /// are a test of an empty slice, in line.
    #[inline]
    pub fn new(unknown: &'f UnknownTaggedFields<'_>) -> Result<Self, EncodeError> {
        if !unknown.is_empty() {
            if let Some(tag) = unknown.repeated_tag() {
                return Err(EncodeError::new(EncodeErrorKind::DuplicateTag(tag)));
            }
        }
        Ok(TaggedFieldWriter {
            remaining: unknown.wire_entries(),
        })
    }

    /// Writes every unknown field whose tag is below `tag`, then checks that
    /// `tag` itself, which is about to be written, is not also unknown.
    #[inline]
    pub fn write_before(
        &mut self,
        buf: &mut Writer<'_>,
        tag: u32,
        known_present: bool,
    ) -> Result<(), EncodeError> {
        if self.remaining.is_empty() {
            return Ok(());
        }
        self.write_unknown_before(buf, tag, known_present)
    }

    /// [`write_before`](Self::write_before) with unknown fields left.
    #[inline(never)]
    fn write_unknown_before(
        &mut self,
        buf: &mut Writer<'_>,
        tag: u32,
        known_present: bool,
    ) -> Result<(), EncodeError> {
        let mut end = 0;
        while let Some(entry) = entry_at(self.remaining, end) {
            if entry.tag > tag || (entry.tag == tag && !known_present) {
                break;
            }
            if entry.tag == tag {
                return Err(EncodeError::new(EncodeErrorKind::DuplicateTag(tag)));
            }
            end = entry.end;
        }
        buf.put_slice(&self.remaining[..end]);
        self.remaining = &self.remaining[end..];
        Ok(())
    }

    /// Writes the unknown fields that are left.
    #[inline]
    pub fn finish(self, buf: &mut Writer<'_>) {
        if !self.remaining.is_empty() {
            buf.put_slice(self.remaining);
        }
    }
}

/// The encoded size of unknown tagged fields, headers included.
#[inline]
pub fn unknown_tagged_fields_len(unknown: &UnknownTaggedFields<'_>) -> usize {
    unknown.wire_entries().len()
}

// ---------------------------------------------------------------------------
// Reading.

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

impl<'a> Reader<'a> {
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
            return Ok(None);
        }
        match read(self) {
            Ok(value) => Ok(Some(value)),
            Err(e) => Err(e),
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
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_tagged_fields(
        &mut self,
        unknown: &mut UnknownTaggedFields<'a>,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<(), DecodeError> {
        // Most sections are empty: a single zero count.
        if self.skip_empty_tagged_section() {
            return Ok(());
        }
        // The loop over the fields gets a copy of the reader, not its
        // address, so that the reader stays in registers on the usual path
        // (see `Reader::error`).
        let mut reader = self.clone();
        let section = reader.read_tagged_field_list(&mut known)?;
        if section.unknown_count > 0 {
            reader.keep_unknown_tagged_fields(&section, unknown);
        }
        *self = reader;
        Ok(())
    }

    /// Skips an empty tagged-field section (a single zero count): true if
    /// there was one, false (reading nothing) otherwise.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn skip_empty_tagged_section(&mut self) -> bool {
        if self.unread.first() == Some(&0) {
            self.skip(1);
            true
        } else {
            false
        }
    }

    /// Reads past a tagged-field section with the checks of
    /// [`Reader::read_tagged_fields`], keeping nothing.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn skip_tagged_fields(
        &mut self,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<(), DecodeError> {
        if self.skip_empty_tagged_section() {
            return Ok(());
        }
        let mut reader = self.clone();
        reader.read_tagged_field_list(&mut known)?;
        *self = reader;
        Ok(())
    }

    /// Reads the tagged-field section of a struct that has no tagged fields
    /// of its own, returning its fields, all unknown. The usual empty
    /// section returns an empty list without the list's address ever being
    /// taken, so that a struct decoded in line stays in registers.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_unknown_tagged_section(&mut self) -> Result<UnknownTaggedFields<'a>, DecodeError> {
        if self.skip_empty_tagged_section() {
            return Ok(UnknownTaggedFields::new());
        }
        let mut unknown = UnknownTaggedFields::new();
        self.read_tagged_fields(&mut unknown, no_known_tags)?;
        Ok(unknown)
    }

    /// Reads past the tagged-field section of a struct that has no tagged
    /// fields of its own, with the checks of
    /// [`Reader::read_unknown_tagged_section`].
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn skip_unknown_tagged_section(&mut self) -> Result<(), DecodeError> {
        self.skip_tagged_fields(no_known_tags)
    }

    /// Reads a non-empty tagged-field section, handing each field to
    /// `known`, and describes the fields it did not take. Allocates nothing
    /// unless tags arrive out of order (then one `u32` per field with a tag
    /// of 64 or more, to find repeats).
    ///
    /// `known` is a trait object so that this loop is compiled once, not
    /// once per struct with tagged fields.
    #[inline(never)]
    fn read_tagged_field_list(
        &mut self,
        known: &mut dyn FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
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
            fields_start: self.position(),
            end: self.position(),
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
            let entry_start = self.position();
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
            let header_len = self.position() - entry_start;
            let data = self.take_announced(size)?;
            let mut field = Reader {
                input: data,
                unread: data,
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
                            used: field.position(),
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
                section.unknown_end = self.position();
                section.unknown_count += 1;
                section.unknown_len += shortest + size;
            }
        }
        section.end = self.position();
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
            let (tag, tag_len) = get_uvarint(rest).ok()?;
            let (size, size_len) = get_uvarint(rest.get(tag_len..)?).ok()?;
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
                    .and_then(|rest| get_uvarint(rest).ok())
                    .map_or(0, |(tag, _)| tag)
            };
            fields.sort_unstable_by_key(|&at| (tag_at(at), at));
            let mut entries = Vec::with_capacity(section.unknown_len);
            for at in fields {
                let Some(rest) = input.get(at..section.end) else {
                    continue;
                };
                let Ok((tag, tag_len)) = get_uvarint(rest) else {
                    continue;
                };
                let Ok((size, size_len)) = get_uvarint(&rest[tag_len..]) else {
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
}

/// The `known` callback of a struct without tagged fields of its own: one
/// function for all of them, so the section reader is compiled once for them.
fn no_known_tags(_tag: u32, _field: &mut Reader<'_>) -> Result<bool, DecodeError> {
    Ok(false)
}

// ---------------------------------------------------------------------------
// Writing and sizing.

/// The size of a tagged field with a value of `size` bytes, header included.
#[inline]
pub fn tagged_field_len(tag: u32, size: usize) -> usize {
    uvarint_len(tag) + uvarint_len(size as u32) + size
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
        let unknown = UnknownTaggedFields::from(vec![field(7, 0xbb), field(1, 0xaa)]);
        let mut buf = Vec::new();
        let mut out = Writer::new(&mut buf);
        let mut writer = TaggedFieldWriter::new(&unknown).unwrap_or_else(|e| panic!("{e}"));
        assert!(writer.write_before(&mut out, 3, true).is_ok());
        out.put_slice(&[3, 1, 0xcc]);
        writer.finish(&mut out);
        drop(out);
        assert_eq!(buf, [1, 1, 0xaa, 3, 1, 0xcc, 7, 1, 0xbb]);
    }

    #[test]
    fn rejects_unknown_field_reusing_a_known_tag() {
        let unknown = UnknownTaggedFields::from(vec![field(3, 0xaa)]);
        let mut writer = TaggedFieldWriter::new(&unknown).unwrap_or_else(|e| panic!("{e}"));
        assert!(writer
            .write_before(&mut Writer::new(&mut Vec::new()), 3, true)
            .is_err());
        let dup = UnknownTaggedFields::from(vec![field(3, 0), field(3, 1), field(1, 0)]);
        assert!(TaggedFieldWriter::new(&dup).is_err());
    }

    #[test]
    fn fields_are_kept_in_wire_form_and_tag_order() {
        let mut fields = UnknownTaggedFields::from(vec![field(300, 1), field(2, 2)]);
        fields.insert(field(7, 3));
        fields.insert(field(2, 4));
        let tags: Vec<(u32, u8)> = fields.iter().map(|f| (f.tag, f.data[0])).collect();
        assert_eq!(tags, [(2, 2), (2, 4), (7, 3), (300, 1)]);
        assert_eq!(fields.len(), 4);
        assert_eq!(
            fields.wire_entries(),
            [2, 1, 2, 2, 1, 4, 7, 1, 3, 0xac, 0x02, 1, 1]
        );
        // The same fields borrowed from wire bytes are equal.
        let wire = [2, 1, 2, 2, 1, 4, 7, 1, 3, 0xac, 0x02, 1, 1];
        let borrowed = UnknownTaggedFields::from_checked_entries(Cow::Borrowed(&wire[..]), 4);
        assert_eq!(borrowed, fields);
        assert_eq!(borrowed.clone().into_owned(), fields);
        assert_eq!(format!("{borrowed:?}"), format!("{fields:?}"));
        assert!(TaggedFieldWriter::new(&fields).is_err()); // tag 2 twice
        assert!(UnknownTaggedFields::new().is_empty());
        assert_eq!(
            UnknownTaggedFields::from(Vec::new()),
            UnknownTaggedFields::new()
        );
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
