//! JSON rendering of decoded records, for the command-line tool.
//!
//! Bytes are standard base64 with padding (`null` for null), with a readable
//! copy in `keyUtf8` / `valueUtf8` when they are valid UTF-8. Offsets and
//! timestamps of records are absolute.
//!
//! [`records_to_json`] builds the whole document in memory;
//! [`write_records_json`] writes the same text as it decodes, one batch and
//! one record at a time, so its memory does not grow with the blob.

use std::fmt;
use std::io::{self, Write};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::batch::RecordBatch;
use super::error::RecordsError;
use super::legacy::{LegacyEntry, LegacyMessage};
use super::options::DecodeOptions;
use super::record::{ControlRecord, Record};
use super::set::{Batch, Batches, RecordSet};

/// Decodes a whole records blob and renders it as JSON:
/// `{"batches": [...], "partialTail": <bytes or null>}`.
///
/// Every record is decoded, so any error in the blob is returned. The whole
/// document is held in memory (about 2 KB per record); to print a large blob
/// use [`write_records_json`].
pub fn records_to_json(blob: &[u8], options: &DecodeOptions) -> Result<Value, RecordsError> {
    RecordSet::parse(blob, options)?.to_json()
}

/// Why [`write_records_json`] stopped.
#[derive(Debug)]
pub enum WriteJsonError {
    /// The blob does not decode.
    Records(RecordsError),
    /// The writer failed.
    Io(io::Error),
}

impl fmt::Display for WriteJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteJsonError::Records(inner) => fmt::Display::fmt(inner, f),
            WriteJsonError::Io(inner) => fmt::Display::fmt(inner, f),
        }
    }
}

impl std::error::Error for WriteJsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteJsonError::Records(inner) => std::error::Error::source(inner),
            WriteJsonError::Io(inner) => std::error::Error::source(inner),
        }
    }
}

impl From<RecordsError> for WriteJsonError {
    fn from(error: RecordsError) -> Self {
        WriteJsonError::Records(error)
    }
}

impl From<io::Error> for WriteJsonError {
    fn from(error: io::Error) -> Self {
        WriteJsonError::Io(error)
    }
}

/// Decodes a records blob and writes its JSON form to `out` as it goes:
/// the same text as [`records_to_json`] printed by `serde_json` (indented
/// by two spaces when `pretty`, else on one line), without a final newline.
///
/// Entries come from [`Batches`], so at most one decompressed batch is held
/// at a time, and each record is written field by field (bytes are
/// base64-encoded and escaped straight into `out`), so no record's JSON is
/// ever built in memory. On an error the text written so far is an
/// incomplete document; to write nothing unless the whole blob decodes, walk
/// it with [`Batches`] first (as the command-line tool does).
pub fn write_records_json<W: Write + ?Sized>(
    blob: &[u8],
    options: &DecodeOptions,
    out: &mut W,
    pretty: bool,
) -> Result<(), WriteJsonError> {
    let mut json = JsonWriter {
        out,
        pretty,
        depth: 0,
    };
    let mut batches = Batches::new(blob, options);
    json.open(b'{')?;
    json.key(true, "batches")?;
    json.open(b'[')?;
    let mut first = true;
    for batch in batches.by_ref() {
        json.item(first)?;
        first = false;
        match batch? {
            Batch::V2(batch) => {
                json.entry(batch.header_json(), batch.records(), JsonWriter::record)?
            }
            Batch::Legacy(entry) => {
                json.entry(entry.header_json(), entry.messages(), JsonWriter::message)?
            }
        }
    }
    json.close(b']', !first)?;
    json.key(false, "partialTail")?;
    json.value(&batches.partial_tail().into())?;
    json.close(b'}', true)?;
    Ok(())
}

/// Writes JSON piece by piece in `serde_json`'s layouts: compact, or its
/// pretty printer's (two-space indent, `": "` after keys, empty containers
/// as `[]` and `{}`).
struct JsonWriter<'w, W: Write + ?Sized> {
    out: &'w mut W,
    pretty: bool,
    depth: usize,
}

impl<W: Write + ?Sized> JsonWriter<'_, W> {
    /// A new line at the current depth (pretty only).
    fn newline(&mut self) -> io::Result<()> {
        if self.pretty {
            self.out.write_all(b"\n")?;
            for _ in 0..self.depth {
                self.out.write_all(b"  ")?;
            }
        }
        Ok(())
    }

    fn open(&mut self, bracket: u8) -> io::Result<()> {
        self.depth += 1;
        self.out.write_all(&[bracket])
    }

    /// Closes a container; `filled` when it holds anything.
    fn close(&mut self, bracket: u8, filled: bool) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if filled {
            self.newline()?;
        }
        self.out.write_all(&[bracket])
    }

    /// Starts an element of a container.
    fn item(&mut self, first: bool) -> io::Result<()> {
        if !first {
            self.out.write_all(b",")?;
        }
        self.newline()
    }

    /// Starts a member of an object.
    fn key(&mut self, first: bool, key: &str) -> io::Result<()> {
        self.item(first)?;
        self.string(key)?;
        self.out.write_all(if self.pretty { b": " } else { b":" })
    }

    /// Writes a string, escaped as `serde_json` escapes it, without copying.
    fn string(&mut self, text: &str) -> io::Result<()> {
        Ok(serde_json::to_writer(&mut *self.out, text)?)
    }

    /// Writes bytes as a base64 string, or `null`, without copying.
    fn base64(&mut self, bytes: Option<&[u8]>) -> io::Result<()> {
        let Some(bytes) = bytes else {
            return self.out.write_all(b"null");
        };
        self.out.write_all(b"\"")?;
        {
            let mut encoder = base64::write::EncoderWriter::new(&mut *self.out, &STANDARD);
            encoder.write_all(bytes)?;
            encoder.finish()?;
        }
        self.out.write_all(b"\"")
    }

    /// Writes a small value at the current depth.
    fn value(&mut self, value: &Value) -> io::Result<()> {
        if !self.pretty {
            return Ok(serde_json::to_writer(&mut *self.out, value)?);
        }
        // Strings escape their line breaks, so every `\n` of the pretty text
        // starts a line, to be indented by the current depth.
        let text = serde_json::to_vec_pretty(value)?;
        for (index, line) in text.split(|&byte| byte == b'\n').enumerate() {
            if index > 0 {
                self.newline()?;
            }
            self.out.write_all(line)?;
        }
        Ok(())
    }

    /// Writes `name` as base64 (or null) and `nameUtf8` when readable: the
    /// members [`insert_bytes`] makes.
    fn bytes_members(&mut self, name: &str, bytes: Option<&[u8]>) -> io::Result<()> {
        self.key(false, name)?;
        self.base64(bytes)?;
        if let Some(text) = bytes.and_then(|bytes| std::str::from_utf8(bytes).ok()) {
            self.key(false, &format!("{name}Utf8"))?;
            self.string(text)?;
        }
        Ok(())
    }

    /// Writes a record as [`record_json`] renders it.
    fn record(&mut self, record: Record<'_>) -> io::Result<()> {
        self.open(b'{')?;
        self.key(true, "offset")?;
        self.value(&record.offset.into())?;
        self.key(false, "timestamp")?;
        self.value(&record.timestamp.into())?;
        self.bytes_members("key", record.key)?;
        self.bytes_members("value", record.value)?;
        self.key(false, "headers")?;
        self.open(b'[')?;
        for (index, header) in record.headers.iter().enumerate() {
            self.item(index == 0)?;
            self.open(b'{')?;
            self.key(true, "key")?;
            self.string(header.key)?;
            self.key(false, "value")?;
            self.base64(header.value)?;
            self.close(b'}', true)?;
        }
        self.close(b']', !record.headers.is_empty())?;
        if let Some(control) = record.control {
            self.key(false, "control")?;
            self.value(&control_json(control))?;
        }
        self.close(b'}', true)
    }

    /// Writes a legacy message as [`legacy_record_json`] renders it.
    fn message(&mut self, message: LegacyMessage<'_>) -> io::Result<()> {
        self.open(b'{')?;
        self.key(true, "offset")?;
        self.value(&message.offset.into())?;
        self.key(false, "timestamp")?;
        self.value(&message.timestamp.into())?;
        self.bytes_members("key", message.key)?;
        self.bytes_members("value", message.value)?;
        self.key(false, "headers")?;
        self.out.write_all(b"[]")?;
        self.close(b'}', true)
    }

    /// Writes one entry: the members of `header`, then `"records"` with each
    /// item of `records`, written by `write` as it is decoded.
    fn entry<T>(
        &mut self,
        header: Map<String, Value>,
        records: impl Iterator<Item = Result<T, RecordsError>>,
        write: impl Fn(&mut Self, T) -> io::Result<()>,
    ) -> Result<(), WriteJsonError> {
        self.open(b'{')?;
        for (index, (name, value)) in header.iter().enumerate() {
            self.key(index == 0, name)?;
            self.value(value)?;
        }
        self.key(header.is_empty(), "records")?;
        self.open(b'[')?;
        let mut first = true;
        for record in records {
            let record = record?;
            self.item(first)?;
            first = false;
            write(self, record)?;
        }
        self.close(b']', !first)?;
        self.close(b'}', true)?;
        Ok(())
    }
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
        let records = self
            .records()
            .map(|record| record.map(|record| record_json(&record)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut object = self.header_json();
        object.insert("records".into(), records.into());
        Ok(Value::Object(object))
    }

    /// The members of the batch's JSON form before `"records"`.
    fn header_json(&self) -> Map<String, Value> {
        let header = self.header();
        let json = json!({
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
        });
        match json {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }
}

impl LegacyEntry<'_> {
    /// Renders the entry and its messages as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        let records = self
            .messages()
            .map(|inner| inner.map(|inner| legacy_record_json(&inner)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut object = self.header_json();
        object.insert("records".into(), records.into());
        Ok(Value::Object(object))
    }

    /// The members of the entry's JSON form before `"records"`.
    fn header_json(&self) -> Map<String, Value> {
        let message = self.message();
        let mut object = Map::new();
        object.insert("offset".into(), message.offset.into());
        object.insert("magic".into(), message.magic.into());
        object.insert("crc".into(), message.crc.into());
        object.insert("attributes".into(), message.attributes.into());
        object.insert("compression".into(), self.compression().name().into());
        if let Some(timestamp) = message.timestamp {
            object.insert("timestamp".into(), timestamp.into());
        }
        object
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
