//! The wire shape of a message at one version: what a peer actually encodes.
//!
//! Names, documentation and defaults are left out on purpose: two schemas
//! whose shapes are equal at a version produce the same bytes at that
//! version.

use std::collections::BTreeMap;

use crate::model::{Field, FieldType, Scalar, Schema};

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
    /// A struct the schema does not define (cannot happen in a validated
    /// schema), or one nested too deep; compared by name.
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

/// True when the type's length prefix changes between the classic and the
/// compact encoding.
pub(crate) fn has_length(ty: &FieldType) -> bool {
    matches!(
        ty,
        FieldType::String | FieldType::Bytes | FieldType::Records | FieldType::Array(_)
    )
}

/// True when `field` uses compact lengths in `version` of `schema`: the
/// field's own `flexibleVersions` override wins over the message's.
pub(crate) fn is_compact(schema: &Schema, field: &Field, version: i16) -> bool {
    has_length(&field.ty)
        && field
            .flexible_versions
            .unwrap_or(schema.flexible_versions)
            .contains(version)
}

/// The wire shape of the whole message at `version`.
pub(crate) fn message_shape(schema: &Schema, version: i16) -> Shape {
    fields_shape(schema, &schema.fields, version, 0)
}

/// The wire shape of a field list at `version`.
pub(crate) fn fields_shape(schema: &Schema, fields: &[Field], version: i16, depth: usize) -> Shape {
    let mut shape = Shape {
        flexible: schema.flexible_versions.contains(version),
        untagged: Vec::new(),
        tagged: BTreeMap::new(),
    };
    for field in fields.iter().filter(|f| f.versions.contains(version)) {
        let field_shape = field_shape(schema, field, version, depth);
        match field.tag.filter(|_| field.is_tagged_in(version)) {
            Some(tag) => {
                shape.tagged.insert(tag, field_shape);
            }
            None => shape.untagged.push(field_shape),
        }
    }
    shape
}

/// The wire shape of one field at `version`, whether or not it exists then.
pub(crate) fn field_shape(
    schema: &Schema,
    field: &Field,
    version: i16,
    depth: usize,
) -> FieldShape {
    FieldShape {
        ty: type_shape(schema, &field.ty, version, depth),
        nullable: field.nullable_versions.contains(version),
        compact: is_compact(schema, field, version),
    }
}

fn type_shape(schema: &Schema, ty: &FieldType, version: i16, depth: usize) -> TypeShape {
    match ty {
        FieldType::Scalar(s) => TypeShape::Scalar(*s),
        FieldType::String => TypeShape::String,
        FieldType::Bytes => TypeShape::Bytes,
        FieldType::Records => TypeShape::Records,
        FieldType::Array(e) => TypeShape::Array(Box::new(type_shape(schema, e, version, depth))),
        FieldType::Struct(name) => match schema.find_struct(name) {
            Some(def) if depth < MAX_DEPTH => {
                TypeShape::Struct(fields_shape(schema, &def.fields, version, depth + 1))
            }
            _ => TypeShape::Opaque(name.clone()),
        },
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
