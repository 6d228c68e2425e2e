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

use kafka_wire::runtime::json::JsonWriter;
use serde_json::Value;

use super::batch::RecordBatch;
use super::error::RecordsError;
use super::legacy::{LegacyEntry, LegacyMessage};
use super::options::DecodeOptions;
use super::record::Record;
use super::set::{Batch, Batches, RecordSet};

/// Decodes a whole records blob and renders it as JSON:
/// `{"batches": [...], "partialTail": <bytes or null>}`.
///
/// Every record is decoded, so any error in the blob is returned. The whole
/// document is held in memory (about 2 KB per record); to print a large blob
/// use [`write_records_json`].
pub fn records_to_json(blob: &[u8], options: &DecodeOptions) -> Result<Value, RecordsError> {
    build(|out| write_records_json_to(blob, options, out))
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
    mut out: &mut W,
    pretty: bool,
) -> Result<(), WriteJsonError> {
    write_records_json_to(blob, options, &mut JsonWriter::new(&mut out, pretty))
}

/// Decodes a records blob and writes its JSON form to `out` as it goes, as
/// [`write_records_json`] does, as one value of a larger document (such as
/// the `records` member of a Produce request: see
/// [`JsonWriter::value_if`] to write nothing unless the whole blob
/// decodes). This is the one description of the records' JSON form:
/// [`records_to_json`] and the `to_json` methods build what it writes.
pub fn write_records_json_to(
    blob: &[u8],
    options: &DecodeOptions,
    out: &mut JsonWriter<'_>,
) -> Result<(), WriteJsonError> {
    let mut batches = Batches::new(blob, options);
    out.begin_object()?;
    out.key("batches")?;
    out.begin_array()?;
    for batch in batches.by_ref() {
        write_batch(&batch?, out)?;
    }
    out.end_array()?;
    out.key("partialTail")?;
    match batches.partial_tail() {
        Some(len) => out.u64(len as u64)?,
        None => out.null()?,
    }
    out.end_object()?;
    Ok(())
}

/// Writes one entry, a v2 batch or a legacy one.
fn write_batch(batch: &Batch<'_>, out: &mut JsonWriter<'_>) -> Result<(), WriteJsonError> {
    match batch {
        Batch::V2(batch) => write_v2_batch(batch, out),
        Batch::Legacy(entry) => write_legacy_entry(entry, out),
    }
}

/// A v2 batch: its header's members, then `"records"`.
fn write_v2_batch(batch: &RecordBatch<'_>, out: &mut JsonWriter<'_>) -> Result<(), WriteJsonError> {
    out.begin_object()?;
    write_batch_header(batch, out)?;
    out.key("records")?;
    out.begin_array()?;
    for record in batch.records() {
        write_record(&record?, out)?;
    }
    out.end_array()?;
    out.end_object()?;
    Ok(())
}

/// A legacy entry: its wrapper message's members, then `"records"`.
fn write_legacy_entry(
    entry: &LegacyEntry<'_>,
    out: &mut JsonWriter<'_>,
) -> Result<(), WriteJsonError> {
    out.begin_object()?;
    write_legacy_header(entry, out)?;
    out.key("records")?;
    out.begin_array()?;
    for message in entry.messages() {
        write_legacy_message(&message?, out)?;
    }
    out.end_array()?;
    out.end_object()?;
    Ok(())
}

/// The members of a v2 batch before `"records"`.
fn write_batch_header(batch: &RecordBatch<'_>, out: &mut JsonWriter<'_>) -> io::Result<()> {
    let header = batch.header();
    out.key("baseOffset")?;
    out.i64(header.base_offset)?;
    out.key("batchLength")?;
    out.i64(header.batch_length.into())?;
    out.key("partitionLeaderEpoch")?;
    out.i64(header.partition_leader_epoch.into())?;
    out.key("magic")?;
    out.i64(header.magic.into())?;
    out.key("crc")?;
    out.u64(header.crc.into())?;
    out.key("attributes")?;
    out.i64(header.attributes.into())?;
    out.key("compression")?;
    out.str(batch.compression().name())?;
    out.key("timestampType")?;
    out.str(header.timestamp_type().name())?;
    out.key("isTransactional")?;
    out.bool(header.is_transactional())?;
    out.key("isControl")?;
    out.bool(header.is_control())?;
    out.key("lastOffsetDelta")?;
    out.i64(header.last_offset_delta.into())?;
    out.key("baseTimestamp")?;
    out.i64(header.base_timestamp)?;
    out.key("maxTimestamp")?;
    out.i64(header.max_timestamp)?;
    out.key("producerId")?;
    out.i64(header.producer_id)?;
    out.key("producerEpoch")?;
    out.i64(header.producer_epoch.into())?;
    out.key("baseSequence")?;
    out.i64(header.base_sequence.into())
}

/// The members of a legacy entry before `"records"`.
fn write_legacy_header(entry: &LegacyEntry<'_>, out: &mut JsonWriter<'_>) -> io::Result<()> {
    let message = entry.message();
    out.key("offset")?;
    out.i64(message.offset)?;
    out.key("magic")?;
    out.i64(message.magic.into())?;
    out.key("crc")?;
    out.u64(message.crc.into())?;
    out.key("attributes")?;
    out.i64(message.attributes.into())?;
    out.key("compression")?;
    out.str(entry.compression().name())?;
    if let Some(timestamp) = message.timestamp {
        out.key("timestamp")?;
        out.i64(timestamp)?;
    }
    Ok(())
}

/// A record: `offset`, `timestamp`, `key` and `value` (with their readable
/// copies), `headers`, and `control` for a control record.
fn write_record(record: &Record<'_>, out: &mut JsonWriter<'_>) -> io::Result<()> {
    out.begin_object()?;
    out.key("offset")?;
    out.i64(record.offset)?;
    out.key("timestamp")?;
    out.i64(record.timestamp)?;
    write_bytes_members("key", "keyUtf8", record.key, out)?;
    write_bytes_members("value", "valueUtf8", record.value, out)?;
    out.key("headers")?;
    out.begin_array()?;
    for header in &record.headers {
        out.begin_object()?;
        out.key("key")?;
        out.str(header.key)?;
        out.key("value")?;
        write_nullable_base64(header.value, out)?;
        out.end_object()?;
    }
    out.end_array()?;
    if let Some(control) = record.control {
        out.key("control")?;
        out.begin_object()?;
        out.key("version")?;
        out.i64(control.version.into())?;
        out.key("type")?;
        out.i64(control.record_type.into())?;
        out.end_object()?;
    }
    out.end_object()
}

/// A legacy message, in a record's form (with no headers).
fn write_legacy_message(message: &LegacyMessage<'_>, out: &mut JsonWriter<'_>) -> io::Result<()> {
    out.begin_object()?;
    out.key("offset")?;
    out.i64(message.offset)?;
    out.key("timestamp")?;
    match message.timestamp {
        Some(timestamp) => out.i64(timestamp)?,
        None => out.null()?,
    }
    write_bytes_members("key", "keyUtf8", message.key, out)?;
    write_bytes_members("value", "valueUtf8", message.value, out)?;
    out.key("headers")?;
    out.begin_array()?;
    out.end_array()?;
    out.end_object()
}

/// `name` as base64 (or null), then `utf8_name` with the text when the
/// bytes are valid UTF-8.
fn write_bytes_members(
    name: &str,
    utf8_name: &str,
    bytes: Option<&[u8]>,
    out: &mut JsonWriter<'_>,
) -> io::Result<()> {
    out.key(name)?;
    write_nullable_base64(bytes, out)?;
    if let Some(text) = bytes.and_then(|bytes| std::str::from_utf8(bytes).ok()) {
        out.key(utf8_name)?;
        out.str(text)?;
    }
    Ok(())
}

fn write_nullable_base64(bytes: Option<&[u8]>, out: &mut JsonWriter<'_>) -> io::Result<()> {
    match bytes {
        Some(bytes) => out.base64(bytes),
        None => out.null(),
    }
}

/// The tree of what `write` writes; a tree is written to no io::Write, so
/// only the records can fail.
fn build(
    write: impl FnOnce(&mut JsonWriter<'_>) -> Result<(), WriteJsonError>,
) -> Result<Value, RecordsError> {
    JsonWriter::try_build(write).map_err(|error| match error {
        WriteJsonError::Records(error) => error,
        WriteJsonError::Io(_) => RecordsError::Invalid {
            context: "JSON form",
            offset: 0,
            reason: "building the JSON tree failed",
        },
    })
}

impl RecordSet<'_> {
    /// Renders the set as JSON; see [`records_to_json`].
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        build(|out| {
            out.begin_object()?;
            out.key("batches")?;
            out.begin_array()?;
            for batch in &self.batches {
                write_batch(batch, out)?;
            }
            out.end_array()?;
            out.key("partialTail")?;
            match self.partial_tail {
                Some(len) => out.u64(len as u64)?,
                None => out.null()?,
            }
            out.end_object()?;
            Ok(())
        })
    }
}

impl Batch<'_> {
    /// Renders the entry as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        build(|out| write_batch(self, out))
    }
}

impl RecordBatch<'_> {
    /// Renders the batch and its records as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        build(|out| write_v2_batch(self, out))
    }
}

impl LegacyEntry<'_> {
    /// Renders the entry and its messages as JSON.
    pub fn to_json(&self) -> Result<Value, RecordsError> {
        build(|out| write_legacy_entry(self, out))
    }
}
