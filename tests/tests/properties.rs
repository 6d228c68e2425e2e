//! Property tests over every message and version: an arbitrary value, built
//! from the schema in its JSON form, converts to the message, encodes,
//! decodes to an equal value, and its computed size equals its length, so
//! that a buffer sized from it never reallocates.
//!
//! Metadata records, which the golden fixtures do not cover, are tested the
//! same way through `MetadataRecord`.

use std::path::Path;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use kafka_codegen::model::{Field, FieldType, MessageKind, Scalar, Schema, SchemaSet};
use kafka_wire::{MetadataRecord, RequestBody, ResponseBody};
use kafka_wire_tests::{api_of, workspace_root};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Map, Value};

fn scalar(s: Scalar) -> BoxedStrategy<Value> {
    match s {
        Scalar::Bool => any::<bool>().prop_map(Value::from).boxed(),
        Scalar::Int8 => any::<i8>().prop_map(Value::from).boxed(),
        Scalar::Int16 => any::<i16>().prop_map(Value::from).boxed(),
        Scalar::Uint16 => any::<u16>().prop_map(Value::from).boxed(),
        Scalar::Int32 => any::<i32>().prop_map(Value::from).boxed(),
        Scalar::Uint32 => any::<u32>().prop_map(Value::from).boxed(),
        Scalar::Int64 => any::<i64>().prop_map(Value::from).boxed(),
        Scalar::Float64 => any::<f64>()
            .prop_map(|f| kafka_wire::runtime::JsonForm::to_json(&f, 0))
            .boxed(),
        Scalar::Uuid => any::<[u8; 16]>()
            .prop_map(|b| Value::String(URL_SAFE_NO_PAD.encode(b)))
            .boxed(),
    }
}

/// Mostly short strings, and one in sixteen of 128 to 160 characters: long
/// enough that a compact length takes two varint bytes (at least 127 bytes)
/// and an int16 length needs its high byte.
fn string() -> BoxedStrategy<Value> {
    prop_oneof![
        15 => "[a-zA-Z0-9é✓ ]{0,8}",
        1 => "[a-zA-Z0-9é✓ ]{128,160}",
    ]
    .prop_map(Value::String)
    .boxed()
}

/// Bytes, mostly short, and one in sixteen of 127 to 200 bytes.
fn bytes() -> BoxedStrategy<Value> {
    prop_oneof![
        15 => prop::collection::vec(any::<u8>(), 0..8),
        1 => prop::collection::vec(any::<u8>(), 127..200),
    ]
    .prop_map(|b| Value::String(STANDARD.encode(b)))
    .boxed()
}

/// The most elements of a long array: past 127, so that a compact count
/// takes two varint bytes.
const LONG_ARRAY: std::ops::Range<usize> = 127..130;

/// A value of `ty`, never null.
fn value(schema: &Schema, ty: &FieldType, version: i16, depth: u32) -> BoxedStrategy<Value> {
    match ty {
        FieldType::Scalar(s) => scalar(*s),
        FieldType::String => string(),
        FieldType::Bytes | FieldType::Records => bytes(),
        FieldType::Array(element) => {
            let max = if depth > 3 { 1 } else { 3 };
            let element = value(schema, element, version, depth + 1);
            let short = prop::collection::vec(element.clone(), 0..max);
            // One top-level array in thirty-two is long, so that the
            // elements' own arrays stay short and a case stays small.
            let array = if depth == 0 {
                prop_oneof![31 => short, 1 => prop::collection::vec(element, LONG_ARRAY)].boxed()
            } else {
                short.boxed()
            };
            array.prop_map(Value::Array).boxed()
        }
        FieldType::Struct(name) => match schema.find_struct(name) {
            Some(def) => object(schema, &def.fields, version, depth + 1),
            None => Just(Value::Null).boxed(),
        },
    }
}

fn field(schema: &Schema, f: &Field, version: i16, depth: u32) -> BoxedStrategy<Value> {
    let value = value(schema, &f.ty, version, depth);
    if f.nullable_versions.contains(version) {
        prop_oneof![1 => Just(Value::Null), 3 => value].boxed()
    } else {
        value
    }
}

/// The JSON object of a struct at `version`: every field the version has.
fn object(schema: &Schema, fields: &[Field], version: i16, depth: u32) -> BoxedStrategy<Value> {
    let present: Vec<&Field> = fields
        .iter()
        .filter(|f| f.versions.contains(version))
        .collect();
    let keys: Vec<String> = present.iter().map(|f| lower_first(&f.name)).collect();
    let values: Vec<BoxedStrategy<Value>> = present
        .iter()
        .map(|f| field(schema, f, version, depth))
        .collect();
    values
        .prop_map(move |values| {
            let map: Map<String, Value> = keys.iter().cloned().zip(values).collect();
            Value::Object(map)
        })
        .boxed()
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Converts, encodes, decodes and compares one value.
fn round_trip(schema: &Schema, version: i16, json: &Value) -> Result<(), String> {
    let key = schema.api_key.unwrap_or(-1);
    macro_rules! check {
        ($from:expr, $decode:expr) => {{
            let message = $from.map_err(|e| format!("from JSON: {e}"))?;
            let mut buf = Vec::with_capacity(message.encoded_len(version));
            let capacity = buf.capacity();
            message
                .encode(&mut buf, version)
                .map_err(|e| format!("encode: {e}"))?;
            if buf.capacity() != capacity {
                return Err(format!(
                    "encoding reallocated: capacity {capacity} -> {}",
                    buf.capacity()
                ));
            }
            if buf.len() != message.encoded_len(version) {
                return Err(format!(
                    "size {} != length {}",
                    message.encoded_len(version),
                    buf.len()
                ));
            }
            let decoded = $decode(&buf).map_err(|e| format!("decode: {e}"))?;
            if decoded != message {
                return Err(format!(
                    "decoded value differs from the encoded one: {}",
                    hex::encode(&buf)
                ));
            }
            let back = decoded.to_json(version);
            if &back != json {
                return Err(format!("JSON differs:\n got {back}\n want {json}"));
            }
            Ok(())
        }};
    }
    match schema.kind {
        MessageKind::Request => {
            let api = api_of(&schema.name).map_err(|e| format!("{e:?}"))?;
            check!(RequestBody::from_json(json, api, version), |b| {
                RequestBody::decode(b, api, version)
            })
        }
        MessageKind::Response => {
            let api = api_of(&schema.name).map_err(|e| format!("{e:?}"))?;
            check!(ResponseBody::from_json(json, api, version), |b| {
                ResponseBody::decode(b, api, version)
            })
        }
        MessageKind::Metadata => check!(MetadataRecord::from_json(json, key, version), |b| {
            MetadataRecord::decode(b, key, version)
        }),
        _ => Ok(()),
    }
}

fn schemas() -> Vec<Schema> {
    let set =
        SchemaSet::load(&[workspace_root().join("messages")]).unwrap_or_else(|e| panic!("{e}"));
    set.schemas
}

fn run(kinds: &[MessageKind], cases: u32) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for schema in schemas().iter().filter(|s| kinds.contains(&s.kind)) {
        for version in schema.valid_versions.iter() {
            let strategy = object(schema, &schema.fields, version, 0);
            let mut runner = TestRunner::new(Config {
                cases,
                failure_persistence: None,
                ..Config::default()
            });
            let result = runner.run(&strategy, |json| {
                round_trip(schema, version, &json).map_err(TestCaseError::fail)
            });
            checked += 1;
            if let Err(e) = result {
                failures.push(format!("{} v{version}: {e}", schema.name));
            }
        }
    }
    assert!(
        checked > 0,
        "no schema versions found under {}",
        Path::new("messages").display()
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn metadata_records_round_trip() {
    run(&[MessageKind::Metadata], 256);
}

#[test]
fn requests_and_responses_round_trip() {
    run(&[MessageKind::Request, MessageKind::Response], 48);
}

/// The widened strategies do reach two-byte compact lengths: a long string,
/// long bytes and a long array each turn up within a few hundred draws.
#[test]
fn long_strings_bytes_and_arrays_are_generated() {
    use proptest::strategy::ValueTree;
    let schema = schemas()
        .into_iter()
        .find(|s| s.name == "MetadataRequest")
        .unwrap_or_else(|| panic!("no MetadataRequest schema"));
    let ints = FieldType::Array(Box::new(FieldType::Scalar(Scalar::Int32)));
    let strategies = [
        ("string", string(), 127),
        ("bytes", bytes(), 4 * 127 / 3),
        ("array", value(&schema, &ints, 12, 0), 127),
    ];
    let mut runner = TestRunner::deterministic();
    for (what, strategy, at_least) in strategies {
        let long = (0..400).any(|_| {
            let drawn = strategy
                .new_tree(&mut runner)
                .unwrap_or_else(|e| panic!("{e}"))
                .current();
            let len = match &drawn {
                Value::String(s) => s.len(),
                Value::Array(items) => items.len(),
                _ => 0,
            };
            len >= at_least
        });
        assert!(long, "no {what} of {at_least} or more in 400 draws");
    }
}
