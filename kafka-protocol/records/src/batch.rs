//! Decoding of v2 record batches (magic 2).

use std::borrow::Cow;

use super::compression::{codec_of, decompress_at, Bound, Compression};
use super::cursor::Cursor;
use super::error::RecordsError;
use super::options::DecodeOptions;
use super::record::{BatchContext, Records, MIN_RECORD_LEN};

/// The magic byte of v2 record batches.
pub const MAGIC_V2: i8 = 2;

/// Bytes before every batch or legacy message: offset `i64` and length `i32`.
pub const LOG_OVERHEAD: usize = 12;

/// Size of a v2 batch header, from `baseOffset` to the records count.
pub const RECORD_BATCH_OVERHEAD: usize = 61;

/// Smallest valid `batchLength`: the header after the length field.
const MIN_BATCH_LENGTH: usize = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;

/// Position of `attributes` in a batch; the CRC covers from here to the end.
pub(crate) const ATTRIBUTES_OFFSET: usize = 21;

/// Attribute bit: timestamps are `LogAppendTime`.
pub(crate) const TIMESTAMP_TYPE_FLAG: i16 = 0x08;
/// Attribute bit: the batch is part of a transaction.
pub(crate) const TRANSACTIONAL_FLAG: i16 = 0x10;
/// Attribute bit: the batch holds control records.
pub(crate) const CONTROL_FLAG: i16 = 0x20;
/// Attribute bit: `baseTimestamp` holds the delete horizon.
pub(crate) const DELETE_HORIZON_FLAG: i16 = 0x40;

/// What a batch's timestamps mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Set by the producer.
    #[default]
    CreateTime,
    /// Set by the broker when appending to the log.
    LogAppendTime,
}

impl TimestampType {
    /// `CreateTime` or `LogAppendTime`, as Kafka spells them.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// The fixed fields of a v2 batch, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// Offset of the first record.
    pub base_offset: i64,
    /// Bytes after this field to the end of the batch.
    pub batch_length: i32,
    /// Leader epoch of the partition when the batch was appended.
    pub partition_leader_epoch: i32,
    /// Always [`MAGIC_V2`].
    pub magic: i8,
    /// CRC-32C from the attributes to the end of the batch.
    pub crc: u32,
    /// Compression, timestamp type and flag bits.
    pub attributes: i16,
    /// Offset delta of the last record.
    pub last_offset_delta: i32,
    /// Timestamp of the first record (or the delete horizon, see
    /// [`delete_horizon_ms`](Self::delete_horizon_ms)).
    pub base_timestamp: i64,
    /// Largest timestamp in the batch (the append time for `LogAppendTime`).
    pub max_timestamp: i64,
    /// Producer id, or -1.
    pub producer_id: i64,
    /// Producer epoch, or -1.
    pub producer_epoch: i16,
    /// Sequence number of the first record, or -1.
    pub base_sequence: i32,
    /// Number of records.
    pub record_count: i32,
}

impl BatchHeader {
    /// The codec in bits 0-2, or `None` for an id Kafka does not define.
    pub fn compression(&self) -> Option<Compression> {
        Compression::from_id((self.attributes & 0x07) as u8)
    }

    /// The timestamp type in bit 3.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & TIMESTAMP_TYPE_FLAG != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Whether the batch is part of a transaction (bit 4).
    pub fn is_transactional(&self) -> bool {
        self.attributes & TRANSACTIONAL_FLAG != 0
    }

    /// Whether the batch holds control records (bit 5).
    pub fn is_control(&self) -> bool {
        self.attributes & CONTROL_FLAG != 0
    }

    /// The delete horizon stored in `baseTimestamp` when bit 6 is set.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        (self.attributes & DELETE_HORIZON_FLAG != 0).then_some(self.base_timestamp)
    }

    /// Offset of the last record: `base_offset + last_offset_delta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    fn context(&self) -> BatchContext {
        BatchContext {
            base_offset: self.base_offset,
            base_timestamp: self.base_timestamp,
            log_append_time: (self.timestamp_type() == TimestampType::LogAppendTime)
                .then_some(self.max_timestamp),
            is_control: self.is_control(),
            record_count: self.record_count,
        }
    }
}

/// A decoded v2 record batch.
///
/// The records section is borrowed from the input when the batch is not
/// compressed, so iterating its records copies nothing; a compressed batch
/// owns its decompressed records section and its records borrow from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch<'a> {
    header: BatchHeader,
    compression: Compression,
    records: Cow<'a, [u8]>,
    /// Where the records section starts, for error offsets: its position in
    /// the input, or 0 for a decompressed section.
    records_offset: usize,
}

impl<'a> RecordBatch<'a> {
    /// Decodes the batch at the start of `input`, returning it with the
    /// number of bytes it takes (`12 + batch_length`).
    ///
    /// The CRC is verified and a compressed records section is decompressed
    /// within `options`' limit; the records themselves are decoded, and any
    /// error in them reported, while iterating [`records`](Self::records).
    /// An input shorter than the batch is [`RecordsError::Truncated`]; to
    /// treat an incomplete last batch as such, parse with
    /// [`Batches`](super::Batches).
    pub fn decode(input: &'a [u8], options: &DecodeOptions) -> Result<(Self, usize), RecordsError> {
        Self::decode_at(input, 0, options)
    }

    /// Decodes the batch at `start` in `blob`; errors carry offsets in `blob`.
    pub(crate) fn decode_at(
        blob: &'a [u8],
        start: usize,
        options: &DecodeOptions,
    ) -> Result<(Self, usize), RecordsError> {
        let input = blob.get(start..).unwrap_or_default();
        let mut outer = Cursor::new(input, start, "record batch");
        let base_offset = outer.read_i64()?;
        let batch_length = outer.read_i32()?;
        let length = usize::try_from(batch_length)
            .ok()
            .filter(|&length| length >= MIN_BATCH_LENGTH)
            .ok_or(RecordsError::Invalid {
                context: "record batch",
                offset: start,
                reason: "batch length is smaller than the v2 batch header",
            })?;
        let body = outer.read_bytes(length)?;

        let mut reader = Cursor::new(body, start + LOG_OVERHEAD, "record batch");
        let partition_leader_epoch = reader.read_i32()?;
        let magic_offset = reader.offset();
        let magic = reader.read_i8()?;
        if magic != MAGIC_V2 {
            return Err(RecordsError::BadMagic {
                offset: magic_offset,
                magic,
            });
        }
        let crc = reader.read_u32()?;
        let computed = crc32c::crc32c(
            body.get(ATTRIBUTES_OFFSET - LOG_OVERHEAD..)
                .unwrap_or_default(),
        );
        if computed != crc {
            return Err(RecordsError::CrcMismatch {
                offset: start,
                expected: crc,
                computed,
            });
        }
        let attributes_offset = reader.offset();
        let attributes = reader.read_i16()?;
        let compression = codec_of(attributes, attributes_offset)?;
        let last_offset_delta = reader.read_i32()?;
        let base_timestamp = reader.read_i64()?;
        let max_timestamp = reader.read_i64()?;
        let producer_id = reader.read_i64()?;
        let producer_epoch = reader.read_i16()?;
        let base_sequence = reader.read_i32()?;
        let count_offset = reader.offset();
        let record_count = reader.read_i32()?;
        let records_offset = reader.offset();
        let data = reader.read_bytes(reader.remaining())?;

        let header = BatchHeader {
            base_offset,
            batch_length,
            partition_leader_epoch,
            magic,
            crc,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            record_count,
        };
        let (records, records_offset) = match compression {
            Compression::None => (Cow::Borrowed(data), records_offset),
            codec => {
                let bound = Bound::new(codec, records_offset, options.max_decompressed_size);
                (Cow::Owned(decompress_at(codec, data, &bound, false)?), 0)
            }
        };
        // Every record takes at least 7 bytes: reject impossible counts now.
        let possible = records.len() / MIN_RECORD_LEN;
        if usize::try_from(record_count).map_or(true, |count| count > possible) {
            return Err(RecordsError::InvalidRecordCount {
                offset: count_offset,
                count: record_count,
            });
        }
        let batch = RecordBatch {
            header,
            compression,
            records,
            records_offset,
        };
        Ok((batch, LOG_OVERHEAD + length))
    }

    /// The batch's fixed fields.
    pub fn header(&self) -> &BatchHeader {
        &self.header
    }

    /// The batch's codec.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The (decompressed) records section.
    pub fn records_section(&self) -> &[u8] {
        &self.records
    }

    /// Bytes of the decompressed records section; 0 when the batch is not
    /// compressed (its records are read in place).
    pub fn decompressed_len(&self) -> usize {
        match self.compression {
            Compression::None => 0,
            _ => self.records.len(),
        }
    }

    /// True when the records section is borrowed from the input, i.e. the
    /// batch is not compressed and iterating it copies nothing.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.records, Cow::Borrowed(_))
    }

    /// Iterates the records, decoding each in turn.
    ///
    /// Offsets in errors are positions in the input for an uncompressed
    /// batch, and in the decompressed records section otherwise.
    pub fn records(&self) -> Records<'_> {
        Records::new(&self.records, self.records_offset, self.header.context())
    }

    /// This batch with its records section copied if it was borrowed.
    pub fn into_owned(self) -> RecordBatch<'static> {
        RecordBatch {
            header: self.header,
            compression: self.compression,
            records: Cow::Owned(self.records.into_owned()),
            records_offset: self.records_offset,
        }
    }
}
