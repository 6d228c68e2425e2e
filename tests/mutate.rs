//! Mutations of valid message bodies, for the differential run against
//! Kafka's Java reader (`tests/tests/java_differential.rs`).
//!
//! A body is first walked by its schema ([`sites`]), independently of
//! kafka-wire's decoder, to find where its length prefixes, strings,
//! varints and tagged sections are; [`mutations`] then derives, with a
//! fixed-seed generator, bodies that break one rule each (or bend it, as a
//! non-minimal varint does). Mutations that change a body's size are only
//! made outside tagged fields, whose declared sizes would otherwise no
//! longer match: the point of each is the rule it names, not a size.

use kafka_codegen::model::{Field, FieldType, Scalar, Schema};

/// What a mutation does to a valid body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MutationKind {
    /// The body cut short.
    Truncation,
    /// One byte XORed with a non-zero mask.
    FlippedByte,
    /// Bytes after the body.
    AppendedBytes,
    /// A byte of a string replaced so that it is no longer UTF-8.
    InvalidUtf8,
    /// An unsigned varint written in six bytes: longer than any 32-bit one.
    OverlongVarint,
    /// An unsigned varint padded to five bytes, its value kept; in one
    /// variant the fifth byte also has a bit past the 32-bit width.
    FiveByteVarint,
    /// A tagged field given twice in one section.
    DuplicateTag,
    /// A tagged section's fields out of ascending tag order.
    OutOfOrderTags,
    /// A length prefix of -2 or the type's minimum, in place of the field.
    NegativeLength,
    /// A length prefix past the bytes there are.
    HugeLength,
}

impl MutationKind {
    /// Every kind, in the order the run reports them.
    pub const ALL: [MutationKind; 10] = [
        MutationKind::Truncation,
        MutationKind::FlippedByte,
        MutationKind::AppendedBytes,
        MutationKind::InvalidUtf8,
        MutationKind::OverlongVarint,
        MutationKind::FiveByteVarint,
        MutationKind::DuplicateTag,
        MutationKind::OutOfOrderTags,
        MutationKind::NegativeLength,
        MutationKind::HugeLength,
    ];

    /// A short stable name, such as `truncation`.
    pub fn name(self) -> &'static str {
        match self {
            MutationKind::Truncation => "truncation",
            MutationKind::FlippedByte => "flipped-byte",
            MutationKind::AppendedBytes => "appended-bytes",
            MutationKind::InvalidUtf8 => "invalid-utf8",
            MutationKind::OverlongVarint => "overlong-varint",
            MutationKind::FiveByteVarint => "five-byte-varint",
            MutationKind::DuplicateTag => "duplicate-tag",
            MutationKind::OutOfOrderTags => "out-of-order-tags",
            MutationKind::NegativeLength => "negative-length",
            MutationKind::HugeLength => "huge-length",
        }
    }
}

/// One mutated body.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// What was done.
    pub kind: MutationKind,
    /// How, within the kind, such as `i32-min` for a negative length.
    pub variant: &'static str,
    /// The mutated body.
    pub bytes: Vec<u8>,
}

/// A small deterministic generator (SplitMix64), so that a seed always
/// gives the same mutations.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A length prefix: of a string, bytes, records or an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LengthSite {
    /// Where the prefix starts.
    pub at: usize,
    /// How many bytes the prefix takes.
    pub prefix: usize,
    /// Where the field (prefix and content) ends.
    pub end: usize,
    /// A compact (`uvarint(len + 1)`) prefix, else a classic one.
    pub compact: bool,
    /// A classic int32 prefix (bytes, records, arrays), else int16.
    pub wide: bool,
    /// Whether the field may be null in the version.
    pub nullable: bool,
    /// Inside a tagged field.
    pub nested: bool,
}

/// An unsigned varint: a compact length, or a tagged section's count, tag
/// or size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarintSite {
    /// Where it starts.
    pub at: usize,
    /// How many bytes it takes.
    pub len: usize,
    /// Its value.
    pub value: u32,
    /// Inside a tagged field.
    pub nested: bool,
}

/// A tagged-field section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedSection {
    /// Where its count starts.
    pub at: usize,
    /// Where its first field starts (after the count).
    pub first: usize,
    /// Each field, tag, size and data: where it starts and ends.
    pub fields: Vec<(usize, usize)>,
    /// Each field's tag.
    pub tags: Vec<u32>,
    /// Inside a tagged field.
    pub nested: bool,
}

/// Where a valid body's mutable parts are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites {
    /// Every length prefix.
    pub lengths: Vec<LengthSite>,
    /// The content of every non-empty string: start and length.
    pub strings: Vec<(usize, usize)>,
    /// Every unsigned varint.
    pub varints: Vec<VarintSite>,
    /// Every tagged section.
    pub sections: Vec<TaggedSection>,
}

/// Walks `body`, a valid encoding of `schema` at `version`, by the schema,
/// and says where its parts are; an error if the body does not follow the
/// schema to its last byte.
pub fn sites(schema: &Schema, version: i16, body: &[u8]) -> Result<Sites, String> {
    let mut walk = Walk {
        schema,
        version,
        flexible: schema.flexible_versions.contains(version),
        body,
        pos: 0,
        depth: 0,
        sites: Sites::default(),
    };
    walk.fields(&schema.fields)?;
    if walk.pos != body.len() {
        return Err(format!(
            "the walk ended at byte {} of {}",
            walk.pos,
            body.len()
        ));
    }
    Ok(walk.sites)
}

struct Walk<'a> {
    schema: &'a Schema,
    version: i16,
    flexible: bool,
    body: &'a [u8],
    pos: usize,
    depth: u32,
    sites: Sites,
}

fn width(s: Scalar) -> usize {
    match s {
        Scalar::Bool | Scalar::Int8 => 1,
        Scalar::Int16 | Scalar::Uint16 => 2,
        Scalar::Int32 | Scalar::Uint32 => 4,
        Scalar::Int64 | Scalar::Float64 => 8,
        Scalar::Uuid => 16,
    }
}

impl Walk<'_> {
    fn take(&mut self, n: usize) -> Result<usize, String> {
        let at = self.pos;
        if self.body.len() - at < n {
            return Err(format!("{n} bytes needed at byte {at}"));
        }
        self.pos += n;
        Ok(at)
    }

    fn uvarint(&mut self) -> Result<u32, String> {
        let at = self.pos;
        let mut value = 0u32;
        for i in 0..5 {
            let byte = *self
                .body
                .get(at + i)
                .ok_or_else(|| format!("a varint ends early at byte {at}"))?;
            value |= u32::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.pos = at + i + 1;
                self.sites.varints.push(VarintSite {
                    at,
                    len: i + 1,
                    value,
                    nested: self.depth > 0,
                });
                return Ok(value);
            }
        }
        Err(format!("a varint too long at byte {at}"))
    }

    /// A length prefix: where it starts, and the length (None for null).
    fn length(&mut self, wide: bool) -> Result<(usize, Option<usize>), String> {
        let at = self.pos;
        let len = if self.flexible {
            self.uvarint()?.checked_sub(1).map(|n| n as usize)
        } else if wide {
            let p = self.take(4)?;
            let n = i32::from_be_bytes(self.body[p..p + 4].try_into().expect("4 bytes"));
            usize::try_from(n).ok()
        } else {
            let p = self.take(2)?;
            let n = i16::from_be_bytes(self.body[p..p + 2].try_into().expect("2 bytes"));
            usize::try_from(n).ok()
        };
        Ok((at, len))
    }

    fn push_length(&mut self, at: usize, prefix_end: usize, wide: bool, nullable: bool) {
        self.sites.lengths.push(LengthSite {
            at,
            prefix: prefix_end - at,
            end: self.pos,
            compact: self.flexible,
            wide,
            nullable,
            nested: self.depth > 0,
        });
    }

    fn value(&mut self, ty: &FieldType, nullable: bool) -> Result<(), String> {
        match ty {
            FieldType::Scalar(s) => {
                self.take(width(*s))?;
            }
            FieldType::String => {
                let (at, len) = self.length(false)?;
                let prefix_end = self.pos;
                if let Some(n) = len {
                    let start = self.take(n)?;
                    if n > 0 {
                        self.sites.strings.push((start, n));
                    }
                }
                self.push_length(at, prefix_end, false, nullable);
            }
            FieldType::Bytes | FieldType::Records => {
                let (at, len) = self.length(true)?;
                let prefix_end = self.pos;
                if let Some(n) = len {
                    self.take(n)?;
                }
                self.push_length(at, prefix_end, true, nullable);
            }
            FieldType::Array(element) => {
                let (at, len) = self.length(true)?;
                let prefix_end = self.pos;
                for _ in 0..len.unwrap_or(0) {
                    self.value(element, false)?;
                }
                self.push_length(at, prefix_end, true, nullable);
            }
            FieldType::Struct(name) => {
                let def = self
                    .schema
                    .find_struct(name)
                    .ok_or_else(|| format!("no struct {name}"))?;
                if nullable {
                    let marker = self.take(1)?;
                    if (self.body[marker] as i8) < 0 {
                        return Ok(());
                    }
                }
                self.fields(&def.fields)?;
            }
        }
        Ok(())
    }

    fn fields(&mut self, fields: &[Field]) -> Result<(), String> {
        let version = self.version;
        for f in fields.iter().filter(|f| f.versions.contains(version)) {
            if self.flexible && f.is_tagged_in(version) {
                continue;
            }
            self.value(&f.ty, f.nullable_versions.contains(version))?;
        }
        if self.flexible {
            self.section(fields)?;
        }
        Ok(())
    }

    fn section(&mut self, fields: &[Field]) -> Result<(), String> {
        let version = self.version;
        let at = self.pos;
        let count = self.uvarint()?;
        let first = self.pos;
        let mut section = TaggedSection {
            at,
            first,
            fields: Vec::new(),
            tags: Vec::new(),
            nested: self.depth > 0,
        };
        for _ in 0..count {
            let start = self.pos;
            let tag = self.uvarint()?;
            let size = self.uvarint()? as usize;
            let data = self.pos;
            let known = fields.iter().find(|f| {
                f.tag == Some(tag) && f.is_tagged_in(version) && f.versions.contains(version)
            });
            match known {
                Some(f) => {
                    self.depth += 1;
                    self.value(&f.ty, f.nullable_versions.contains(version))?;
                    self.depth -= 1;
                    if self.pos != data + size {
                        return Err(format!("tag {tag} at byte {start}: size {size}"));
                    }
                }
                None => {
                    self.take(size)?;
                }
            }
            section.fields.push((start, self.pos));
            section.tags.push(tag);
        }
        self.sites.sections.push(section);
        Ok(())
    }
}

/// `value` as an unsigned varint of exactly `len` bytes (at least its
/// minimal length), its last byte ORed with `excess`.
pub fn uvarint_padded(value: u32, len: usize, excess: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let shift = 7 * i;
        let group = if shift < 32 {
            ((value >> shift) & 0x7f) as u8
        } else {
            0
        };
        out.push(if i + 1 < len { group | 0x80 } else { group });
    }
    if let Some(last) = out.last_mut() {
        *last |= excess;
    }
    out
}

/// `value` as a minimal unsigned varint.
pub fn uvarint(value: u32) -> Vec<u8> {
    let len = (1..=5)
        .find(|&n| n == 5 || u64::from(value) < 1u64 << (7 * n))
        .unwrap_or(5);
    uvarint_padded(value, len, 0)
}

fn splice(body: &[u8], from: usize, to: usize, with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + with.len());
    out.extend_from_slice(&body[..from]);
    out.extend_from_slice(with);
    out.extend_from_slice(&body[to..]);
    out
}

/// Up to `n` distinct items of `items`, chosen by `rng`, in a stable order.
fn pick<'a, T>(rng: &mut Rng, items: &[&'a T], n: usize) -> Vec<&'a T> {
    let mut indexes: Vec<usize> = (0..items.len()).collect();
    let mut chosen = Vec::new();
    while chosen.len() < n && !indexes.is_empty() {
        chosen.push(indexes.swap_remove(rng.below(indexes.len())));
    }
    chosen.sort_unstable();
    chosen.into_iter().map(|i| items[i]).collect()
}

/// A tagged section rebuilt with `fields` (each tag, size and data), its
/// count re-encoded.
fn rebuild_section(body: &[u8], section: &TaggedSection, fields: &[Vec<u8>]) -> Vec<u8> {
    let end = section.fields.last().map_or(section.first, |f| f.1);
    let mut with = uvarint(fields.len() as u32);
    for f in fields {
        with.extend_from_slice(f);
    }
    splice(body, section.at, end, &with)
}

fn unknown_tag(tag: u32, data: &[u8]) -> Vec<u8> {
    let mut out = uvarint(tag);
    out.extend(uvarint(data.len() as u32));
    out.extend_from_slice(data);
    out
}

/// The mutations of `body` (a valid encoding whose parts `sites` found),
/// every kind that applies, chosen by `rng`.
pub fn mutations(body: &[u8], sites: &Sites, rng: &mut Rng) -> Vec<Mutation> {
    let mut out = Vec::new();
    let mut push = |kind, variant, bytes: Vec<u8>| {
        if bytes != body {
            out.push(Mutation {
                kind,
                variant,
                bytes,
            });
        }
    };
    // Truncation and flipped bytes anywhere; appended bytes at the end.
    if !body.is_empty() {
        for _ in 0..3 {
            let cut = rng.below(body.len());
            push(MutationKind::Truncation, "cut", body[..cut].to_vec());
        }
        for _ in 0..4 {
            let mut bytes = body.to_vec();
            let at = rng.below(bytes.len());
            bytes[at] ^= (rng.below(255) + 1) as u8;
            push(MutationKind::FlippedByte, "xor", bytes);
        }
    }
    let mut bytes = body.to_vec();
    bytes.push(0);
    push(MutationKind::AppendedBytes, "zero", bytes);
    let mut bytes = body.to_vec();
    bytes.extend((0..3).map(|_| rng.next_u64() as u8));
    push(MutationKind::AppendedBytes, "three", bytes);

    // Invalid UTF-8, in place, at any depth.
    let strings: Vec<&(usize, usize)> = sites.strings.iter().collect();
    for (i, &&(start, len)) in pick(rng, &strings, 2).iter().enumerate() {
        let mut bytes = body.to_vec();
        let variant = match (i + rng.below(3)) % 3 {
            0 => {
                bytes[start + rng.below(len)] = 0xff;
                "0xff"
            }
            1 => {
                bytes[start + len - 1] = 0xc3;
                "truncated-sequence"
            }
            _ if len >= 3 => {
                bytes[start..start + 3].copy_from_slice(&[0xed, 0xa0, 0x80]);
                "surrogate"
            }
            _ => {
                bytes[start] = 0x80;
                "lone-continuation"
            }
        };
        push(MutationKind::InvalidUtf8, variant, bytes);
    }

    // Varints outside tagged fields: six bytes; five bytes, with excess
    // bits or without.
    let varints: Vec<&VarintSite> = sites.varints.iter().filter(|v| !v.nested).collect();
    for v in pick(rng, &varints, 2) {
        let with = uvarint_padded(v.value, 6, 0);
        push(
            MutationKind::OverlongVarint,
            "six-bytes",
            splice(body, v.at, v.at + v.len, &with),
        );
    }
    let short: Vec<&VarintSite> = varints.iter().copied().filter(|v| v.len < 5).collect();
    for v in pick(rng, &short, 2) {
        let with = uvarint_padded(v.value, 5, 0);
        push(
            MutationKind::FiveByteVarint,
            "padded",
            splice(body, v.at, v.at + v.len, &with),
        );
    }
    for v in pick(rng, &varints, 1) {
        let with = uvarint_padded(v.value, 5, 0x10);
        push(
            MutationKind::FiveByteVarint,
            "excess-bits",
            splice(body, v.at, v.at + v.len, &with),
        );
    }

    // Tagged sections outside tagged fields.
    let sections: Vec<&TaggedSection> = sites.sections.iter().filter(|s| !s.nested).collect();
    for s in pick(rng, &sections, 2) {
        let mut fields: Vec<Vec<u8>> = s.fields.iter().map(|&(a, b)| body[a..b].to_vec()).collect();
        let variant = if fields.is_empty() {
            let twice = unknown_tag(999, &[0x2a]);
            fields = vec![twice.clone(), twice];
            "unknown-twice"
        } else {
            let copy = fields[rng.below(fields.len())].clone();
            fields.push(copy);
            "field-copied"
        };
        push(
            MutationKind::DuplicateTag,
            variant,
            rebuild_section(body, s, &fields),
        );
    }
    for s in pick(rng, &sections, 2) {
        let mut fields: Vec<Vec<u8>> = s.fields.iter().map(|&(a, b)| body[a..b].to_vec()).collect();
        let variant = match fields.len() {
            0 => {
                fields = vec![unknown_tag(5_001, &[1]), unknown_tag(5_000, &[2, 3])];
                "two-unknown-descending"
            }
            1 => {
                fields.insert(0, unknown_tag(5_000, &[7]));
                "unknown-before-known"
            }
            _ => {
                fields.reverse();
                "reversed"
            }
        };
        push(
            MutationKind::OutOfOrderTags,
            variant,
            rebuild_section(body, s, &fields),
        );
    }

    // Length prefixes outside tagged fields.
    let lengths: Vec<&LengthSite> = sites.lengths.iter().filter(|l| !l.nested).collect();
    for l in pick(rng, &lengths, 2) {
        // The whole field becomes the negative prefix alone.
        let variants: [(&str, Vec<u8>); 2] = match (l.compact, l.wide) {
            // Kafka reads `uvarint - 1` as an int: 0xffffffff is -2.
            (true, _) => [
                ("compact-minus-two", uvarint(u32::MAX)),
                ("compact-i32-min", uvarint(0x8000_0001)),
            ],
            (false, true) => [
                ("i32-minus-two", (-2i32).to_be_bytes().to_vec()),
                ("i32-min", i32::MIN.to_be_bytes().to_vec()),
            ],
            (false, false) => [
                ("i16-minus-two", (-2i16).to_be_bytes().to_vec()),
                ("i16-min", i16::MIN.to_be_bytes().to_vec()),
            ],
        };
        for (variant, with) in variants {
            push(
                MutationKind::NegativeLength,
                variant,
                splice(body, l.at, l.end, &with),
            );
        }
    }
    for l in pick(rng, &lengths, 2) {
        // The content stays; the prefix claims more than there is.
        let left = body.len() - (l.at + l.prefix);
        let variants: [(&str, Vec<u8>); 2] = match (l.compact, l.wide) {
            (true, _) => [
                ("compact-i32-max", uvarint(0x8000_0000)),
                ("compact-past-end", uvarint(left as u32 + 2)),
            ],
            (false, true) => [
                ("i32-max", i32::MAX.to_be_bytes().to_vec()),
                ("i32-past-end", (left as i32 + 1).to_be_bytes().to_vec()),
            ],
            (false, false) => [
                ("i16-max", i16::MAX.to_be_bytes().to_vec()),
                (
                    "i16-past-end",
                    (left.min(i16::MAX as usize - 1) as i16 + 1)
                        .to_be_bytes()
                        .to_vec(),
                ),
            ],
        };
        for (variant, with) in variants {
            push(
                MutationKind::HugeLength,
                variant,
                splice(body, l.at, l.at + l.prefix, &with),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_pad_and_keep_their_value() {
        assert_eq!(uvarint(0), [0]);
        assert_eq!(uvarint(300), [0xac, 0x02]);
        assert_eq!(uvarint(u32::MAX), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(uvarint_padded(1, 5, 0), [0x81, 0x80, 0x80, 0x80, 0x00]);
        assert_eq!(uvarint_padded(1, 5, 0x10), [0x81, 0x80, 0x80, 0x80, 0x10]);
        assert_eq!(
            uvarint_padded(1, 6, 0),
            [0x81, 0x80, 0x80, 0x80, 0x80, 0x00]
        );
    }

    #[test]
    fn the_generator_is_deterministic() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }
}
