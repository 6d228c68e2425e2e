//! Property tests over every message and version: an arbitrary value, built
//! from the schema in its JSON form, converts to the message, encodes,
//! decodes to an equal value, and its computed size equals its length, so
//! that a buffer sized from it never reallocates. The streaming writer
//! prints the decoded value byte for byte as serde_json prints its JSON
//! form, compact and pretty.
//!
//! Metadata records, which the golden fixtures do not cover, are tested the
//! same way through `MetadataRecord`.

use std::path::Path;

use kafka_codegen::model::{FieldType, MessageKind, Scalar, Schema, SchemaSet};
use kafka_wire::{MetadataRecord, RequestBody, ResponseBody};
use kafka_wire_tests::strategies::{bytes, object, string, value};
use kafka_wire_tests::{api_of, check_streamed, streamed_json, workspace_root};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

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
            check_streamed(&back, |pretty| {
                streamed_json(pretty, |out| decoded.write_json(out, version))
            })?;
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
    use proptest::strategy::{Strategy, ValueTree};
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
