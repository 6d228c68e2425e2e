//! JSON rendering of decoded records, for the command-line tool.
//!
//! Bytes are standard base64 with padding (`null` for null), with a readable
//! copy in `keyUtf8` / `valueUtf8` when they are valid UTF-8. Offsets and
//! timestamps of records are absolute.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::batch::RecordBatch;
use super::error::RecordsError;
use super::legacy::{LegacyEntry, LegacyMessage};
use super::options::DecodeOptions;
use super::record::{ControlRecord, Record};
use super::set::{Batch, RecordSet};

/// Decodes a whole records blob and renders it as JSON:
/// `{"batches": [...], "partialTail": <bytes or null>}`.
///
/// Every record is decoded, so any error in the blob is returned.
pub fn records_to_json(blob: &[u8], options: &DecodeOptions) -> Result<Value, RecordsError> {
    RecordSet::parse(blob, options)?.to_json()
}

impl RecordSet<'_> {
    /// Renders the set as JSON; see [`records_to_json`].
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        let batches = self
            .batches
            .iter()
            .map(Batch::to_json)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({ "batches": batches, "partialTail": self.partial_tail }))
    }
}

impl Batch<'_> {
    /// Renders the entry as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        match self {
            Batch::V2(batch) => batch.to_json(),
            Batch::Legacy(entry) => entry.to_json(),
        }
    }
}

impl RecordBatch<'_> {
    /// Renders the batch and its records as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        let header = self.header();
        let records = self
            .records()
            .map(|record| record.map(|record| record_json(&record)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(json!({
            "baseOffset": header.base_offset,
            "batchLength": header.batch_length,
            "partitionLeaderEpoch": header.partition_leader_epoch,
            "magic": header.magic,
            "crc": header.crc,
            "attributes": header.attributes,
            "compression": self.compression().name(),
            "timestampType": header.timestamp_type().name(),
            "isTransactional": header.is_transactional(),
            "isControl": header.is_control(),
            "lastOffsetDelta": header.last_offset_delta,
            "baseTimestamp": header.base_timestamp,
            "maxTimestamp": header.max_timestamp,
            "producerId": header.producer_id,
            "producerEpoch": header.producer_epoch,
            "baseSequence": header.base_sequence,
            "records": records,
        }))
    }
}

impl LegacyEntry<'_> {
    /// Renders the entry and its messages as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        let message = self.message();
        let records = self
            .messages()
            .map(|inner| inner.map(|inner| legacy_record_json(&inner)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut object = Map::new();
        object.insert("offset".into(), message.offset.into());
        object.insert("magic".into(), message.magic.into());
        object.insert("crc".into(), message.crc.into());
        object.insert("attributes".into(), message.attributes.into());
        object.insert("compression".into(), self.compression().name().into());
        if let Some(timestamp) = message.timestamp {
            object.insert("timestamp".into(), timestamp.into());
        }
        object.insert("records".into(), records.into());
        Ok(Value::Object(object))
    }
}

fn record_json(record: &Record<'_>) -> Value {
    let headers: Vec<Value> = record
        .headers
        .iter()
        .map(|header| json!({ "key": header.key, "value": base64(header.value) }))
        .collect();
    let mut object = Map::new();
    object.insert("offset".into(), record.offset.into());
    object.insert("timestamp".into(), record.timestamp.into());
    insert_bytes(&mut object, "key", record.key);
    insert_bytes(&mut object, "value", record.value);
    object.insert("headers".into(), headers.into());
    if let Some(control) = record.control {
        object.insert("control".into(), control_json(control));
    }
    Value::Object(object)
}

fn legacy_record_json(message: &LegacyMessage<'_>) -> Value {
    let mut object = Map::new();
    object.insert("offset".into(), message.offset.into());
    object.insert("timestamp".into(), message.timestamp.into());
    insert_bytes(&mut object, "key", message.key);
    insert_bytes(&mut object, "value", message.value);
    object.insert("headers".into(), Value::Array(Vec::new()));
    Value::Object(object)
}

fn control_json(control: ControlRecord) -> Value {
    json!({ "version": control.version, "type": control.record_type })
}

/// Inserts `name` as base64 (or null) and `nameUtf8` when readable.
fn insert_bytes(object: &mut Map<String, Value>, name: &str, bytes: Option<&[u8]>) {
    object.insert(name.into(), base64(bytes));
    if let Some(text) = bytes.and_then(|bytes| std::str::from_utf8(bytes).ok()) {
        object.insert(format!("{name}Utf8"), text.into());
    }
}

fn base64(bytes: Option<&[u8]>) -> Value {
    bytes.map_or(Value::Null, |bytes| STANDARD.encode(bytes).into())
}
