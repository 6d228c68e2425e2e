//! Proptest strategies for the JSON form of any message at any version,
//! built from the schema model: every field the version has, null in one
//! case in four where the version allows it, strings with non-ASCII
//! characters, and now and then long strings, bytes and arrays (two-byte
//! compact lengths). The property tests and the Rust-to-Java reference
//! tests draw from them.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use kafka_codegen::model::{Field, FieldType, Scalar, Schema};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value};

/// A scalar of type `s`.
pub fn scalar(s: Scalar) -> BoxedStrategy<Value> {
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
pub fn string() -> BoxedStrategy<Value> {
    prop_oneof![
        15 => "[a-zA-Z0-9é✓ ]{0,8}",
        1 => "[a-zA-Z0-9é✓ ]{128,160}",
    ]
    .prop_map(Value::String)
    .boxed()
}

/// Bytes, mostly short, and one in sixteen of 127 to 200 bytes.
pub fn bytes() -> BoxedStrategy<Value> {
    prop_oneof![
        15 => prop::collection::vec(any::<u8>(), 0..8),
        1 => prop::collection::vec(any::<u8>(), 127..200),
    ]
    .prop_map(|b| Value::String(STANDARD.encode(b)))
    .boxed()
}

/// The most elements of a long array: past 127, so that a compact count
/// takes two varint bytes.
pub const LONG_ARRAY: std::ops::Range<usize> = 127..130;

/// A value of `ty`, never null.
pub fn value(schema: &Schema, ty: &FieldType, version: i16, depth: u32) -> BoxedStrategy<Value> {
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

pub fn field(schema: &Schema, f: &Field, version: i16, depth: u32) -> BoxedStrategy<Value> {
    let value = value(schema, &f.ty, version, depth);
    if f.nullable_versions.contains(version) {
        prop_oneof![1 => Just(Value::Null), 3 => value].boxed()
    } else {
        value
    }
}

/// The JSON object of a struct at `version`: every field the version has.
pub fn object(schema: &Schema, fields: &[Field], version: i16, depth: u32) -> BoxedStrategy<Value> {
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

pub fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `count` values drawn from `strategy`, the same ones for the same `seed`.
pub fn sample(strategy: &BoxedStrategy<Value>, seed: u64, count: usize) -> Vec<Value> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    (0..count)
        .map(|_| {
            strategy
                .new_tree(&mut runner)
                .unwrap_or_else(|e| panic!("a strategy failed: {e}"))
                .current()
        })
        .collect()
}
