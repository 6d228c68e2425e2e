//! Records of a v2 batch (`DefaultRecord`) and their iterator.

use super::cursor::Cursor;
use super::error::RecordsError;

/// One record header: a UTF-8 key and a nullable value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header<'a> {
    /// The header key.
    pub key: &'a str,
    /// The header value; `None` is null.
    pub value: Option<&'a [u8]>,
}

impl<'a> Header<'a> {
    /// A header with the given key and value.
    pub fn new(key: &'a str, value: Option<&'a [u8]>) -> Self {
        Header { key, value }
    }
}

/// The kind of a control record, from the `type` field of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// A transaction was aborted (0).
    Abort,
    /// A transaction was committed (1).
    Commit,
    /// KRaft leader change (2).
    LeaderChange,
    /// KRaft snapshot header (3).
    SnapshotHeader,
    /// KRaft snapshot footer (4).
    SnapshotFooter,
    /// KRaft version record (5).
    KRaftVersion,
    /// KRaft voters record (6).
    KRaftVoters,
    /// A type this module does not know, kept raw.
    Unknown(i16),
}

impl ControlRecordType {
    /// The kind for a raw `type` value.
    pub fn from_raw(raw: i16) -> Self {
        match raw {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KRaftVersion,
            6 => ControlRecordType::KRaftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// The raw `type` value.
    pub fn raw(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KRaftVersion => 5,
            ControlRecordType::KRaftVoters => 6,
            ControlRecordType::Unknown(raw) => raw,
        }
    }
}

/// The decoded key of a record in a control batch.
///
/// The key is `version: i16, type: i16`, big-endian; like the Java client,
/// any version is accepted and bytes past the first four are ignored. The
/// record's value (e.g. the coordinator epoch of a transaction marker) is
/// left raw in [`Record::value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRecord {
    /// The key's version (0 today).
    pub version: i16,
    /// The raw `type` field.
    pub record_type: i16,
}

impl ControlRecord {
    /// Size of the control key as this module writes it.
    pub const KEY_LEN: usize = 4;

    /// A control key of version 0 of the given type.
    pub fn new(kind: ControlRecordType) -> Self {
        ControlRecord {
            version: 0,
            record_type: kind.raw(),
        }
    }

    /// Decodes a control key; `None` if it is shorter than four bytes.
    pub fn from_key(key: &[u8]) -> Option<Self> {
        match key {
            [v0, v1, t0, t1, ..] => Some(ControlRecord {
                version: i16::from_be_bytes([*v0, *v1]),
                record_type: i16::from_be_bytes([*t0, *t1]),
            }),
            _ => None,
        }
    }

    /// The key's bytes.
    pub fn to_key(self) -> [u8; 4] {
        let [v0, v1] = self.version.to_be_bytes();
        let [t0, t1] = self.record_type.to_be_bytes();
        [v0, v1, t0, t1]
    }

    /// The kind of control record.
    pub fn kind(self) -> ControlRecordType {
        ControlRecordType::from_raw(self.record_type)
    }
}

/// One record of a v2 batch, borrowing its key, value and headers from the
/// batch's records section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// Absolute offset: the batch's base offset plus [`offset_delta`](Self::offset_delta).
    pub offset: i64,
    /// Absolute timestamp in milliseconds: the batch's base timestamp plus
    /// [`timestamp_delta`](Self::timestamp_delta), or, in a `LogAppendTime`
    /// batch, the batch's max timestamp (as the Java client reports it).
    pub timestamp: i64,
    /// The record's own attributes byte (unused by Kafka today).
    pub attributes: i8,
    /// Timestamp delta as stored.
    pub timestamp_delta: i64,
    /// Offset delta as stored.
    pub offset_delta: i32,
    /// The key; `None` is null.
    pub key: Option<&'a [u8]>,
    /// The value; `None` is null.
    pub value: Option<&'a [u8]>,
    /// The headers, in order.
    pub headers: Vec<Header<'a>>,
    /// The decoded control key, for records of a control batch.
    pub control: Option<ControlRecord>,
}

/// What a record needs from its batch to compute absolute values.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchContext {
    pub(crate) base_offset: i64,
    pub(crate) base_timestamp: i64,
    /// `Some(max_timestamp)` for `LogAppendTime` batches.
    pub(crate) log_append_time: Option<i64>,
    pub(crate) is_control: bool,
    pub(crate) record_count: i32,
}

/// Smallest encoded record: a length byte and six one-byte fields.
pub(crate) const MIN_RECORD_LEN: usize = 7;

/// Iterator over the records of a v2 batch.
///
/// Yields each record in turn, or an error (after which it ends) when a
/// record is malformed or the records disagree with the batch's count.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    reader: Cursor<'a>,
    context: BatchContext,
    read: usize,
    done: bool,
}

impl<'a> Records<'a> {
    /// Iterates `data`, the records section found at `offset`.
    pub(crate) fn new(data: &'a [u8], offset: usize, context: BatchContext) -> Self {
        Records {
            reader: Cursor::new(data, offset, "record"),
            context,
            read: 0,
            done: false,
        }
    }

    fn declared(&self) -> usize {
        usize::try_from(self.context.record_count).unwrap_or(0)
    }

    fn next_record(&mut self) -> Result<Option<Record<'a>>, RecordsError> {
        let count_mismatch =
            |reader: &Cursor<'_>, found, trailing_bytes| RecordsError::RecordCountMismatch {
                offset: reader.offset(),
                declared: self.context.record_count,
                found,
                trailing_bytes,
            };
        if self.read >= self.declared() {
            if self.reader.is_empty() {
                return Ok(None);
            }
            return Err(count_mismatch(&self.reader, self.read, true));
        }
        if self.reader.is_empty() {
            return Err(count_mismatch(&self.reader, self.read, false));
        }
        let record = decode_record(&mut self.reader, &self.context)?;
        self.read += 1;
        Ok(Some(record))
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_record().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        let left = self.declared().saturating_sub(self.read);
        // One more item is possible: the error for trailing bytes.
        (0, Some(left.saturating_add(1)))
    }
}

/// Decodes one length-prefixed record.
fn decode_record<'a>(
    reader: &mut Cursor<'a>,
    context: &BatchContext,
) -> Result<Record<'a>, RecordsError> {
    let start = reader.offset();
    let length = reader.read_varint()?;
    let length_usize = usize::try_from(length).map_err(|_| RecordsError::NegativeLength {
        context: "record length",
        offset: start,
        length: i64::from(length),
    })?;
    let body_offset = reader.offset();
    let body = reader.read_bytes(length_usize)?;
    let mut body = Cursor::new(body, body_offset, "record");
    let record = decode_body(&mut body, context).map_err(|error| match error {
        // Running out inside the declared length means the length is wrong.
        RecordsError::Truncated { .. } => RecordsError::LengthMismatch {
            context: "record",
            offset: start,
            declared: i64::from(length),
            actual: length_usize,
        },
        other => other,
    })?;
    if !body.is_empty() {
        return Err(RecordsError::LengthMismatch {
            context: "record",
            offset: start,
            declared: i64::from(length),
            actual: length_usize - body.remaining(),
        });
    }
    Ok(record)
}

/// Decodes the fields after the record's length.
fn decode_body<'a>(
    body: &mut Cursor<'a>,
    context: &BatchContext,
) -> Result<Record<'a>, RecordsError> {
    let attributes = body.read_i8()?;
    let timestamp_delta = body.read_varlong()?;
    let offset_delta = body.read_varint()?;
    let key_offset = body.offset();
    let key = body.read_varint_nullable_bytes()?;
    let value = body.read_varint_nullable_bytes()?;
    let headers = decode_headers(body)?;

    let control = if context.is_control {
        let key = key.and_then(ControlRecord::from_key);
        Some(key.ok_or(RecordsError::Invalid {
            context: "control record",
            offset: key_offset,
            reason: "key is null or shorter than 4 bytes",
        })?)
    } else {
        None
    };
    let timestamp = context
        .log_append_time
        .unwrap_or_else(|| context.base_timestamp.wrapping_add(timestamp_delta));
    Ok(Record {
        offset: context.base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp,
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers,
        control,
    })
}

/// Smallest encoded header: key length and value length, one byte each.
const MIN_HEADER_LEN: usize = 2;

fn decode_headers<'a>(body: &mut Cursor<'a>) -> Result<Vec<Header<'a>>, RecordsError> {
    let count_offset = body.offset();
    let count = body.read_varint()?;
    let count = usize::try_from(count).map_err(|_| RecordsError::NegativeLength {
        context: "header count",
        offset: count_offset,
        length: i64::from(count),
    })?;
    if count > body.remaining() / MIN_HEADER_LEN {
        return Err(RecordsError::Truncated {
            context: "record headers",
            offset: body.offset(),
            needed: count.saturating_mul(MIN_HEADER_LEN),
            available: body.remaining(),
        });
    }
    // Reserve only a bounded amount up front: each header is larger in memory
    // than its smallest wire form, so a claimed count is not taken on trust.
    let mut headers = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let key_offset = body.offset();
        // A header's key may not be null: Kafka refuses a negative length.
        let key_len = body.read_varint()?;
        let key = body
            .nullable_bytes(i64::from(key_len))?
            .ok_or(RecordsError::NegativeLength {
                context: "header key length",
                offset: key_offset,
                length: i64::from(key_len),
            })?;
        let key = std::str::from_utf8(key)
            .map_err(|_| RecordsError::InvalidHeaderKey { offset: key_offset })?;
        let value = body.read_varint_nullable_bytes()?;
        headers.push(Header { key, value });
    }
    Ok(headers)
}
