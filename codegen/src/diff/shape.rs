//! The wire shape of a message at one version: what a peer actually encodes.
//!
//! Shapes are read from the IR (`crate::ir`), the form the code generator
//! emits from, so that the diff judges exactly the bytes the generated code
//! writes: which fields are present, tagged, nullable and compact in a
//! version is worked out once, by [`crate::ir::lower`].
//!
//! Names, documentation and defaults are left out on purpose: two schemas
//! whose shapes are equal at a version produce the same bytes at that
//! version.

use std::collections::BTreeMap;

use crate::ir::{FieldIr, FieldKind, MessageIr, StructIr};
use crate::model::{FieldType, Scalar};

/// How deep structs may nest before the shape stops recursing. Kafka's
/// deepest messages nest four or five levels; a cycle would otherwise never end.
pub(crate) const MAX_DEPTH: usize = 32;

/// The encoded form of a field list at one version: the untagged fields in
/// wire order, then the tagged fields by tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Whether the version is flexible: compact lengths and a tagged-field section.
    pub flexible: bool,
    /// The untagged fields, in wire order.
    pub untagged: Vec<FieldShape>,
    /// The tagged fields, by tag.
    pub tagged: BTreeMap<u32, FieldShape>,
}

/// The encoded form of one field at one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldShape {
    /// Its type, with structs expanded.
    pub ty: TypeShape,
    /// Whether null may be written.
    pub nullable: bool,
    /// Whether lengths use the compact (varint) encoding.
    pub compact: bool,
}

/// A type with struct names replaced by the struct's own shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeShape {
    /// A fixed-width scalar.
    Scalar(Scalar),
    /// A string.
    String,
    /// Opaque bytes.
    Bytes,
    /// A record batch blob.
    Records,
    /// An array of the element shape.
    Array(Box<TypeShape>),
    /// A struct, expanded.
    Struct(Shape),
    /// A struct the IR does not hold (cannot happen in a validated schema),
    /// or one nested too deep; compared by its Rust type name.
    Opaque(String),
}

/// The type of a field with struct names erased: two fields whose signatures
/// differ can never encode alike, whatever the version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypeSig {
    /// A fixed-width scalar.
    Scalar(Scalar),
    /// A string.
    String,
    /// Opaque bytes.
    Bytes,
    /// A record batch blob.
    Records,
    /// An array.
    Array(Box<TypeSig>),
    /// Some struct.
    Struct,
}

impl TypeSig {
    /// The signature of a declared type.
    pub fn of(ty: &FieldType) -> TypeSig {
        match ty {
            FieldType::Scalar(s) => TypeSig::Scalar(*s),
            FieldType::String => TypeSig::String,
            FieldType::Bytes => TypeSig::Bytes,
            FieldType::Records => TypeSig::Records,
            FieldType::Array(e) => TypeSig::Array(Box::new(TypeSig::of(e))),
            FieldType::Struct(_) => TypeSig::Struct,
        }
    }
}

/// The wire shape of the whole message at `version`, a valid version.
pub(crate) fn message_shape(message: &MessageIr, version: i16) -> Shape {
    struct_shape(message, message.top(), version, 0)
}

/// The wire shape of a struct's fields at `version`, a version of its context.
fn struct_shape(message: &MessageIr, s: &StructIr, version: i16, depth: usize) -> Shape {
    let mut shape = Shape {
        flexible: s.flexible.holds(version),
        untagged: Vec::new(),
        tagged: BTreeMap::new(),
    };
    for field in s.fields.iter().filter(|f| f.present.holds(version)) {
        let field_shape = field_shape(message, field, version, depth);
        match field.tag_in(version) {
            Some(tag) => {
                shape.tagged.insert(tag, field_shape);
            }
            None => shape.untagged.push(field_shape),
        }
    }
    shape
}

/// The wire shape of one field of `message` at `version`, a version in
/// which it is present.
pub(crate) fn field_shape(
    message: &MessageIr,
    field: &FieldIr,
    version: i16,
    depth: usize,
) -> FieldShape {
    let nested = |name: &str| match message.find_struct(name) {
        Some(s) if depth < MAX_DEPTH => {
            TypeShape::Struct(struct_shape(message, s, version, depth + 1))
        }
        _ => TypeShape::Opaque(name.to_owned()),
    };
    let ty = match &field.kind {
        FieldKind::Scalar(scalar) => TypeShape::Scalar(*scalar),
        FieldKind::String => TypeShape::String,
        FieldKind::Bytes => TypeShape::Bytes,
        FieldKind::Records => TypeShape::Records,
        FieldKind::ScalarArray(scalar) => TypeShape::Array(Box::new(TypeShape::Scalar(*scalar))),
        FieldKind::StringArray => TypeShape::Array(Box::new(TypeShape::String)),
        FieldKind::StructArray(name) => TypeShape::Array(Box::new(nested(name))),
        FieldKind::Struct(name) => nested(name),
    };
    FieldShape {
        ty,
        nullable: field.is_nullable_in(version),
        compact: field.is_compact_in(version),
    }
}

impl Shape {
    /// True when a peer that encodes `self` and one that encodes `newer`
    /// understand each other: everything is equal except that `newer` may
    /// carry tagged fields with tags `self` does not use, at any depth.
    pub fn accepts(&self, newer: &Shape) -> bool {
        self.flexible == newer.flexible
            && self.untagged.len() == newer.untagged.len()
            && self
                .untagged
                .iter()
                .zip(&newer.untagged)
                .all(|(a, b)| a.accepts(b))
            && self
                .tagged
                .iter()
                .all(|(tag, a)| newer.tagged.get(tag).is_some_and(|b| a.accepts(b)))
    }
}

impl FieldShape {
    fn accepts(&self, newer: &FieldShape) -> bool {
        self.nullable == newer.nullable
            && self.compact == newer.compact
            && self.ty.accepts(&newer.ty)
    }
}

impl TypeShape {
    fn accepts(&self, newer: &TypeShape) -> bool {
        match (self, newer) {
            (TypeShape::Array(a), TypeShape::Array(b)) => a.accepts(b),
            (TypeShape::Struct(a), TypeShape::Struct(b)) => a.accepts(b),
            (a, b) => a == b,
        }
    }
}
