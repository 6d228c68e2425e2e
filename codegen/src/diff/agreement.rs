//! Keeps the two readings of a schema in step: the wire shape the diff
//! compares ([`super::shape`]) and the lowered form the code generator emits
//! from ([`crate::ir`]). For every message in `messages/` and every valid
//! version, the shape rebuilt from the IR must equal the diff's shape, so
//! that `diff` judges exactly the bytes the generated code writes.

use std::collections::BTreeMap;
use std::path::Path;

use super::shape::{message_shape, FieldShape, Shape, TypeShape};
use crate::ir::{lower, Cond, FieldIr, FieldKind, MessageIr, StructIr};
use crate::model::SchemaSet;

/// True when `cond` holds at `version`, a version of its context.
fn holds(cond: Cond, version: i16) -> bool {
    match cond {
        Cond::Always => true,
        Cond::Never => false,
        Cond::Between { lowest, highest } => {
            lowest.is_none_or(|lo| version >= lo) && highest.is_none_or(|hi| version <= hi)
        }
    }
}

/// The shape the generated code for `s` writes at `version`.
fn struct_shape(message: &MessageIr, s: &StructIr, version: i16) -> Shape {
    assert!(
        s.context.contains(version),
        "{}: struct {} is reached at v{version}, outside its context",
        message.name,
        s.type_name
    );
    let mut shape = Shape {
        flexible: holds(s.flexible, version),
        untagged: Vec::new(),
        tagged: BTreeMap::new(),
    };
    for field in s.fields.iter().filter(|f| holds(f.present, version)) {
        let field_shape = field_shape(message, field, version);
        match field.tagged {
            Some((tag, cond)) if holds(cond, version) => {
                shape.tagged.insert(tag, field_shape);
            }
            _ => {
                assert!(
                    holds(field.untagged, version),
                    "{}.{}: present at v{version} but neither tagged nor untagged",
                    s.type_name,
                    field.rust_name
                );
                shape.untagged.push(field_shape);
            }
        }
    }
    shape
}

fn field_shape(message: &MessageIr, field: &FieldIr, version: i16) -> FieldShape {
    let nested = |name: &str| {
        let s = message
            .structs
            .iter()
            .find(|s| s.type_name == name)
            .unwrap_or_else(|| panic!("{}: no struct {name}", message.name));
        TypeShape::Struct(struct_shape(message, s, version))
    };
    let (ty, has_length) = match &field.kind {
        FieldKind::Scalar(scalar) => (TypeShape::Scalar(*scalar), false),
        FieldKind::String => (TypeShape::String, true),
        FieldKind::Bytes => (TypeShape::Bytes, true),
        FieldKind::Records => (TypeShape::Records, true),
        FieldKind::ScalarArray(scalar) => {
            (TypeShape::Array(Box::new(TypeShape::Scalar(*scalar))), true)
        }
        FieldKind::StringArray => (TypeShape::Array(Box::new(TypeShape::String)), true),
        FieldKind::StructArray(name) => (TypeShape::Array(Box::new(nested(name))), true),
        FieldKind::Struct(name) => (nested(name), false),
    };
    FieldShape {
        ty,
        nullable: holds(field.nullable, version),
        compact: has_length && holds(field.compact, version),
    }
}

#[test]
fn ir_and_diff_shapes_agree_on_every_version_of_every_message() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../messages");
    let set = SchemaSet::load(&[&dir]).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert!(!set.has_errors(), "{:?}", set.diagnostics);
    assert!(
        set.schemas.len() > 100,
        "only {} schemas",
        set.schemas.len()
    );
    let mut versions = 0;
    for schema in &set.schemas {
        let message = lower(schema);
        let valid = schema.valid_versions;
        for version in valid.lowest..=valid.highest {
            let from_ir = struct_shape(&message, message.top(), version);
            let from_diff = message_shape(schema, version);
            assert_eq!(
                from_ir, from_diff,
                "{} v{version}: the generated code and the diff disagree on the wire shape",
                schema.name
            );
            versions += 1;
        }
    }
    assert!(versions > 500, "only {versions} versions compared");
}
