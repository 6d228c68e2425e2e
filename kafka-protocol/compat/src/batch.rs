//! Record batches written in case data: an object whose only key is
//! `$records` stands for the `records` bytes of a request, built after
//! its placeholders are filled, so that a batch can carry a producer id
//! and epoch learnt from an earlier answer.
//!
//! ```json
//! {"$records": {"codec": "gzip", "count": 3, "producerId": "${producerId}",
//!               "producerEpoch": "${producerEpoch}", "baseSequence": 0}}
//! ```
//!
//! The value is one batch or a list of batches (written one after the
//! other). Each batch's keys, all optional: `codec` (`none`, the default,
//! `gzip`, `snappy`, `lz4`, `zstd`), `count` (records, 3 by default),
//! `timestamp` (the first record's, 1 700 000 000 000 by default, a time in
//! 2023 that no answer's window holds; each next record's is 1 ms later),
//! `valueBytes` (each value's size, 20 by default), `producerId` (-1),
//! `producerEpoch` (-1), `baseSequence` (-1), `transactional` (false),
//! `baseOffset` (0). The bytes are the same on both sides and in every run
//! but for what placeholders put in.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire_records::{Compression, Header, RecordBatchBuilder};
use serde::Deserialize;
use serde_json::Value;

/// The key that marks a batch written as data.
pub const KEY: &str = "$records";

/// One batch as written in case data.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchSpec {
    /// The codec's name.
    #[serde(default = "none")]
    pub codec: String,
    /// How many records.
    #[serde(default = "three")]
    pub count: u32,
    /// The first record's timestamp.
    #[serde(default = "in_2023")]
    pub timestamp: i64,
    /// Each value's size in bytes.
    #[serde(default = "twenty")]
    pub value_bytes: usize,
    /// The producer id.
    #[serde(default = "minus_one")]
    pub producer_id: i64,
    /// The producer epoch.
    #[serde(default = "minus_one_i16")]
    pub producer_epoch: i16,
    /// The first record's sequence.
    #[serde(default = "minus_one_i32")]
    pub base_sequence: i32,
    /// Whether the batch is transactional.
    #[serde(default)]
    pub transactional: bool,
    /// The batch's base offset (the broker assigns its own).
    #[serde(default)]
    pub base_offset: i64,
}

fn none() -> String {
    "none".into()
}
fn three() -> u32 {
    3
}
fn in_2023() -> i64 {
    1_700_000_000_000
}
fn twenty() -> usize {
    20
}
fn minus_one() -> i64 {
    -1
}
fn minus_one_i16() -> i16 {
    -1
}
fn minus_one_i32() -> i32 {
    -1
}

/// The codec named `name`.
pub fn codec(name: &str) -> Option<Compression> {
    Some(match name {
        "none" => Compression::None,
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => return None,
    })
}

impl BatchSpec {
    /// The batch's bytes.
    pub fn build(&self) -> Result<Vec<u8>, String> {
        let compression = codec(&self.codec)
            .ok_or_else(|| format!("codec `{}`: none, gzip, snappy, lz4 or zstd", self.codec))?;
        let mut builder = RecordBatchBuilder::new(self.base_offset)
            .compression(compression)
            .producer_id(self.producer_id)
            .producer_epoch(self.producer_epoch)
            .base_sequence(self.base_sequence)
            .transactional(self.transactional);
        for i in 0..self.count {
            let value: Vec<u8> = (0..self.value_bytes)
                .map(|at| b'a' + u8::try_from((at + i as usize) % 26).unwrap_or(0))
                .collect();
            let key = format!("k{i}");
            builder
                .append(
                    self.timestamp + i64::from(i),
                    Some(key.as_bytes()),
                    Some(&value),
                    &[Header::new("n", Some(i.to_string().as_bytes()))],
                )
                .map_err(|e| e.to_string())?;
        }
        builder.build().map_err(|e| e.to_string())
    }
}

/// Replaces, at any depth, each `{"$records": ...}` of `body` (placeholders
/// already filled) by its batches' bytes, base64 as the JSON form writes
/// `records`.
pub fn build_in(body: &mut Value) -> Result<(), String> {
    match body {
        Value::Object(map) if map.len() == 1 && map.contains_key(KEY) => {
            let spec = map.get(KEY).cloned().unwrap_or(Value::Null);
            let specs: Vec<BatchSpec> = match spec {
                Value::Array(items) => items
                    .into_iter()
                    .map(serde_json::from_value)
                    .collect::<Result<_, _>>(),
                one => serde_json::from_value(one).map(|s| vec![s]),
            }
            .map_err(|e| format!("{KEY}: {e}"))?;
            let mut bytes = Vec::new();
            for spec in &specs {
                bytes.extend(spec.build()?);
            }
            *body = Value::from(STANDARD.encode(bytes));
            Ok(())
        }
        Value::Object(map) => map.values_mut().try_for_each(build_in),
        Value::Array(items) => items.iter_mut().try_for_each(build_in),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_wire_records::{records_to_json, DecodeOptions};
    use serde_json::json;

    #[test]
    fn batches_are_built_where_data_writes_them() {
        let mut body = json!({"topicData": [{"partitionData": [{"index": 0, "records":
            {"$records": [{"codec": "gzip", "producerId": 7, "producerEpoch": 1,
                           "baseSequence": 3, "count": 2},
                          {"transactional": true, "count": 1}]}}]}]});
        build_in(&mut body).unwrap();
        let text = body["topicData"][0]["partitionData"][0]["records"]
            .as_str()
            .unwrap();
        let decoded =
            records_to_json(&STANDARD.decode(text).unwrap(), &DecodeOptions::default()).unwrap();
        let batches = decoded["batches"].as_array().unwrap();
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0]["producerId"], 7);
        assert_eq!(batches[0]["baseSequence"], 3);
        assert_eq!(batches[0]["records"].as_array().unwrap().len(), 2);
        assert_eq!(batches[1]["records"].as_array().unwrap().len(), 1);
        for bad in [
            json!({"$records": {"codec": "brotli"}}),
            json!({"$records": {"nope": 1}}),
        ] {
            let mut bad = bad;
            assert!(build_in(&mut bad).is_err());
        }
    }
}
