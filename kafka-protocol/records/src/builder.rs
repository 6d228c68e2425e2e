//! Encoding of v2 record batches.

use std::borrow::Cow;

use bytes::BufMut;

use super::batch::{
    TimestampType, CONTROL_FLAG, LOG_OVERHEAD, MAGIC_V2, RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_FLAG, TRANSACTIONAL_FLAG,
};
use super::compression::{compress, Compression};
use super::error::RecordsError;
use super::record::{ControlRecord, Header};
use kafka_wire::runtime::varint::{put_varint, put_varlong, varint_len, varlong_len};

/// Builds a v2 record batch, as a producer (or the broker) writes one.
///
/// Records are encoded as they are appended: the first record's timestamp
/// becomes the batch's `baseTimestamp` (as in the Java producer), timestamp
/// deltas are taken from it, offset deltas count up from 0, and
/// `maxTimestamp`, `lastOffsetDelta`, lengths, the record count and the
/// CRC-32C are filled in by [`build`](Self::build). An empty batch gets
/// `baseTimestamp` and `maxTimestamp` -1 and `lastOffsetDelta` -1.
///
/// ```
/// use kafka_wire_records::{Compression, Header, RecordBatchBuilder};
///
/// let mut builder = RecordBatchBuilder::new(42).compression(Compression::None);
/// builder.append(1_700_000_000_000, Some(b"key"), Some(b"value"), &[Header::new("h", None)])?;
/// let bytes = builder.build()?;
/// assert_eq!(bytes.len(), 61 + 18); // header + one 18-byte record
/// # Ok::<(), kafka_wire_records::RecordsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RecordBatchBuilder {
    base_offset: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    compression: Compression,
    timestamp_type: TimestampType,
    log_append_time: Option<i64>,
    transactional: bool,
    control: bool,
    base_timestamp: Option<i64>,
    max_timestamp: i64,
    record_count: i32,
    records: Vec<u8>,
}

impl RecordBatchBuilder {
    /// An empty builder for a batch starting at `base_offset`, with no
    /// producer (id, epoch and sequence -1), partition leader epoch -1, no
    /// compression, `CreateTime`, neither transactional nor control.
    pub fn new(base_offset: i64) -> Self {
        RecordBatchBuilder {
            base_offset,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: None,
            transactional: false,
            control: false,
            base_timestamp: None,
            max_timestamp: i64::MIN,
            record_count: 0,
            records: Vec::new(),
        }
    }

    /// Sets the partition leader epoch.
    #[must_use]
    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.partition_leader_epoch = epoch;
        self
    }

    /// Sets the producer id.
    #[must_use]
    pub fn producer_id(mut self, producer_id: i64) -> Self {
        self.producer_id = producer_id;
        self
    }

    /// Sets the producer epoch.
    #[must_use]
    pub fn producer_epoch(mut self, producer_epoch: i16) -> Self {
        self.producer_epoch = producer_epoch;
        self
    }

    /// Sets the sequence number of the first record.
    #[must_use]
    pub fn base_sequence(mut self, base_sequence: i32) -> Self {
        self.base_sequence = base_sequence;
        self
    }

    /// Sets the codec of the records section.
    #[must_use]
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Sets the timestamp type. With `LogAppendTime` and no
    /// [`log_append_time`](Self::log_append_time), `maxTimestamp` is still the
    /// largest record timestamp.
    #[must_use]
    pub fn timestamp_type(mut self, timestamp_type: TimestampType) -> Self {
        self.timestamp_type = timestamp_type;
        self
    }

    /// Marks the batch `LogAppendTime` with the given append time, which
    /// becomes its `maxTimestamp` (and so every record's timestamp when
    /// decoded), as the broker writes it.
    #[must_use]
    pub fn log_append_time(mut self, timestamp: i64) -> Self {
        self.timestamp_type = TimestampType::LogAppendTime;
        self.log_append_time = Some(timestamp);
        self
    }

    /// Sets the transactional flag.
    #[must_use]
    pub fn transactional(mut self, transactional: bool) -> Self {
        self.transactional = transactional;
        self
    }

    /// Sets the control flag.
    #[must_use]
    pub fn control(mut self, control: bool) -> Self {
        self.control = control;
        self
    }

    /// Number of records appended.
    pub fn len(&self) -> usize {
        usize::try_from(self.record_count).unwrap_or(0)
    }

    /// Whether no record has been appended.
    pub fn is_empty(&self) -> bool {
        self.record_count == 0
    }

    /// Size of the encoded records so far, before compression.
    pub fn records_size(&self) -> usize {
        self.records.len()
    }

    /// Appends a record with an absolute `timestamp` (milliseconds).
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header<'_>],
    ) -> Result<(), RecordsError> {
        let offset_delta = self.record_count;
        let record_count = offset_delta.checked_add(1).ok_or(RecordsError::TooLarge {
            context: "record count",
            size: self.len(),
        })?;
        let base_timestamp = *self.base_timestamp.get_or_insert(timestamp);
        let timestamp_delta = timestamp.wrapping_sub(base_timestamp);
        encode_record(
            &mut self.records,
            timestamp_delta,
            offset_delta,
            key,
            value,
            headers,
        )?;
        self.record_count = record_count;
        self.max_timestamp = self.max_timestamp.max(timestamp);
        Ok(())
    }

    /// Appends a control record (key `version, type`, value kept as given)
    /// and sets the control flag.
    pub fn append_control(
        &mut self,
        timestamp: i64,
        control: ControlRecord,
        value: Option<&[u8]>,
    ) -> Result<(), RecordsError> {
        self.control = true;
        self.append(timestamp, Some(&control.to_key()), value, &[])
    }

    /// Encodes the batch into a new `Vec`.
    pub fn build(&self) -> Result<Vec<u8>, RecordsError> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }

    /// Encodes the batch at the end of `buf`.
    ///
    /// Nothing is written if an error is returned.
    pub fn write_to<B: BufMut + ?Sized>(&self, buf: &mut B) -> Result<(), RecordsError> {
        let records = match self.compression {
            Compression::None => Cow::Borrowed(self.records.as_slice()),
            codec => Cow::Owned(compress(codec, &self.records)?),
        };
        let batch_length = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + records.len();
        let batch_length = i32::try_from(batch_length).map_err(|_| RecordsError::TooLarge {
            context: "record batch",
            size: batch_length,
        })?;
        let empty = self.record_count == 0;
        let max_timestamp = match (self.timestamp_type, self.log_append_time) {
            (TimestampType::LogAppendTime, Some(append_time)) => append_time,
            _ if empty => -1,
            _ => self.max_timestamp,
        };

        // The CRC covers everything from the attributes on.
        let mut covered = Vec::with_capacity(RECORD_BATCH_OVERHEAD);
        covered.put_i16(self.attributes());
        covered.put_i32(self.record_count - 1);
        covered.put_i64(self.base_timestamp.unwrap_or(-1));
        covered.put_i64(max_timestamp);
        covered.put_i64(self.producer_id);
        covered.put_i16(self.producer_epoch);
        covered.put_i32(self.base_sequence);
        covered.put_i32(self.record_count);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&covered), &records);

        buf.put_i64(self.base_offset);
        buf.put_i32(batch_length);
        buf.put_i32(self.partition_leader_epoch);
        buf.put_i8(MAGIC_V2);
        buf.put_u32(crc);
        buf.put_slice(&covered);
        buf.put_slice(&records);
        Ok(())
    }

    fn attributes(&self) -> i16 {
        let mut attributes = i16::from(self.compression.id());
        if self.timestamp_type == TimestampType::LogAppendTime {
            attributes |= TIMESTAMP_TYPE_FLAG;
        }
        if self.transactional {
            attributes |= TRANSACTIONAL_FLAG;
        }
        if self.control {
            attributes |= CONTROL_FLAG;
        }
        attributes
    }
}

/// The length field for nullable bytes: -1 for null.
fn length_of(bytes: Option<&[u8]>, context: &'static str) -> Result<i32, RecordsError> {
    match bytes {
        None => Ok(-1),
        Some(bytes) => i32::try_from(bytes.len()).map_err(|_| RecordsError::TooLarge {
            context,
            size: bytes.len(),
        }),
    }
}

/// Bytes taken by a varint length and the bytes it announces.
fn field_len(length: i32, bytes: Option<&[u8]>) -> usize {
    varint_len(length) + bytes.map_or(0, <[u8]>::len)
}

/// Appends one length-prefixed record to `out`.
fn encode_record(
    out: &mut Vec<u8>,
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[Header<'_>],
) -> Result<(), RecordsError> {
    let key_length = length_of(key, "record key")?;
    let value_length = length_of(value, "record value")?;
    let header_count = i32::try_from(headers.len()).map_err(|_| RecordsError::TooLarge {
        context: "header list",
        size: headers.len(),
    })?;
    let mut header_lengths = Vec::with_capacity(headers.len());
    let mut body_len = 1
        + varlong_len(timestamp_delta)
        + varint_len(offset_delta)
        + field_len(key_length, key)
        + field_len(value_length, value)
        + varint_len(header_count);
    for header in headers {
        let key = Some(header.key.as_bytes());
        let key_length = length_of(key, "header key")?;
        let value_length = length_of(header.value, "header value")?;
        body_len += field_len(key_length, key) + field_len(value_length, header.value);
        header_lengths.push((key_length, value_length));
    }
    let record_length = i32::try_from(body_len).map_err(|_| RecordsError::TooLarge {
        context: "record",
        size: body_len,
    })?;

    out.reserve(varint_len(record_length) + body_len);
    put_varint(out, record_length);
    out.put_i8(0);
    put_varlong(out, timestamp_delta);
    put_varint(out, offset_delta);
    put_nullable(out, key_length, key);
    put_nullable(out, value_length, value);
    put_varint(out, header_count);
    for (header, (key_length, value_length)) in headers.iter().zip(header_lengths) {
        put_nullable(out, key_length, Some(header.key.as_bytes()));
        put_nullable(out, value_length, header.value);
    }
    Ok(())
}

fn put_nullable(out: &mut Vec<u8>, length: i32, bytes: Option<&[u8]>) {
    put_varint(out, length);
    if let Some(bytes) = bytes {
        out.put_slice(bytes);
    }
}
