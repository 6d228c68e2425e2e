//! Checks the record batches of a Produce request as Kafka's broker does,
//! in Kafka's order, before anything is appended and without the state
//! lock.
//!
//! - Before anything else (Kafka's `ProduceRequest.validateRecords`,
//!   [`check_request_records`]): exactly one batch per partition, of magic
//!   2, not zstd below Produce v7.
//! - Then, once the partition is known to be led here ([`check_partition`],
//!   as Kafka's log validates an append): a base offset of 0, the batch's
//!   size within `max.message.bytes`, its CRC, counts that agree with
//!   themselves and with the records, every codec decompressed within one
//!   budget for the whole request; each record keyed on a compacted topic
//!   and stamped within `message.timestamp.before.max.ms` and
//!   `message.timestamp.after.max.ms` (refused records are listed by index,
//!   with Kafka's messages); the whole within `segment.bytes`.

use kafka_wire::ErrorCode;
use kafka_wire_records::{
    BatchHeader, DecodeOptions, RecordBatch, RecordsError, TimestampType, LOG_OVERHEAD,
    MAGIC_OFFSET, MAGIC_V2, RECORD_BATCH_OVERHEAD,
};

/// Where `lastOffsetDelta` sits in a v2 batch.
const LAST_OFFSET_DELTA_OFFSET: usize = 23;
/// Where the record count sits in a v2 batch.
const RECORD_COUNT_OFFSET: usize = 57;
/// Where the attributes sit in a v2 batch.
const ATTRIBUTES_OFFSET: usize = 21;
/// The codec bits of the attributes.
const CODEC_MASK: i16 = 0x07;
/// The first Produce version that may carry zstd batches.
const ZSTD_PRODUCE: i16 = 7;
/// The codec id of zstd.
const ZSTD: i16 = 4;
/// The fewest bytes Kafka's batch iterator reads a batch from (up to and
/// including its magic byte).
const UP_TO_MAGIC: usize = MAGIC_OFFSET + 1;

/// A batch that passed: its header and its place in the records.
#[derive(Debug, Clone)]
pub struct CheckedBatch {
    /// The header.
    pub header: BatchHeader,
    /// Where it is.
    pub range: std::ops::Range<usize>,
}

/// Decompressed bytes a request may still produce.
#[derive(Debug)]
pub struct Budget(pub usize);

/// Why a partition's records are refused, as Kafka's answer says it: the
/// error code, the partition's `errorMessage` and `recordErrors` (the
/// index of each refused record with its message), and whether the answer
/// carries the partition's log start offset (Kafka gives it for the
/// refusals its log validation explains, -1 for the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Kafka's error code.
    pub code: i16,
    /// The partition's error message.
    pub message: Option<String>,
    /// Each refused record: its index in the batch, and why.
    pub record_errors: Vec<(i32, String)>,
    /// Whether the answer carries the log start offset.
    pub with_log_start: bool,
}

impl Refusal {
    /// A refusal with an error code alone, the log start offset not given.
    pub fn code(code: i16) -> Self {
        Refusal {
            code,
            message: None,
            record_errors: Vec::new(),
            with_log_start: false,
        }
    }

    /// A refusal with an error code alone that gives the log start offset
    /// (Kafka's append failures other than its listed few).
    pub fn with_log_start(code: i16) -> Self {
        Refusal {
            with_log_start: true,
            ..Refusal::code(code)
        }
    }
}

impl From<ErrorCode> for Refusal {
    fn from(code: ErrorCode) -> Self {
        Refusal::code(code.code())
    }
}

/// What a partition's log holds its appends to (its topic's configs, the
/// broker's clock).
#[derive(Debug, Clone)]
pub struct Limits {
    /// `topic-partition`, as Kafka's messages name it.
    pub partition: String,
    /// `max.message.bytes`: the largest batch, its log overhead included.
    pub max_message_bytes: usize,
    /// `segment.bytes`: the most bytes one append may hold.
    pub segment_bytes: usize,
    /// Whether `cleanup.policy` includes `compact` (records need keys).
    pub compacted: bool,
    /// Whether `message.timestamp.type` is CreateTime (timestamps checked).
    pub create_time: bool,
    /// `message.timestamp.before.max.ms`.
    pub before_max_ms: i64,
    /// `message.timestamp.after.max.ms`.
    pub after_max_ms: i64,
    /// The broker's clock, in milliseconds since the epoch.
    pub now: i64,
}

/// The size of each whole batch in `records`, by their length fields,
/// stopping where one is not whole (as Kafka's batch iterator stops).
fn batch_sizes(records: &[u8]) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut rest = records;
    while let Some(length) = rest.get(8..12) {
        let length = length.try_into().map(i32::from_be_bytes).unwrap_or(-1);
        let Some(size) = usize::try_from(length).ok().map(|l| l + LOG_OVERHEAD) else {
            break;
        };
        if size > rest.len() || size < UP_TO_MAGIC {
            break;
        }
        sizes.push(size);
        rest = &rest[size..];
    }
    sizes
}

/// Kafka's checks of a partition's records before anything else (its
/// `ProduceRequest.validateRecords`): one whole batch, of magic 2, zstd
/// only from Produce v7. INVALID_RECORD or UNSUPPORTED_COMPRESSION_TYPE.
pub fn check_request_records(version: i16, records: &[u8]) -> Result<(), Refusal> {
    let sizes = batch_sizes(records);
    let Some(&first) = sizes.first() else {
        return Err(ErrorCode::InvalidRecord.into());
    };
    let batch = &records[..first];
    if batch.get(MAGIC_OFFSET).copied() != Some(MAGIC_V2 as u8) {
        return Err(ErrorCode::InvalidRecord.into());
    }
    let attributes = batch
        .get(ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2)
        .and_then(|b| b.try_into().ok())
        .map_or(0, i16::from_be_bytes);
    if version < ZSTD_PRODUCE && attributes & CODEC_MASK == ZSTD {
        return Err(ErrorCode::UnsupportedCompressionType.into());
    }
    if sizes.len() > 1 {
        return Err(ErrorCode::InvalidRecord.into());
    }
    Ok(())
}

/// Checks one partition's records as Kafka's log validates an append, in
/// its order; the error is Kafka's answer for the partition.
pub fn check_partition(
    records: &[u8],
    budget: &mut Budget,
    limits: &Limits,
) -> Result<Vec<CheckedBatch>, Refusal> {
    let corrupt = || Refusal::code(ErrorCode::CorruptMessage.code());
    let invalid = || Refusal::with_log_start(ErrorCode::InvalidRecord.code());
    let mut batches = Vec::new();
    let mut record_errors: Vec<(i32, String, ErrorCode)> = Vec::new();
    let mut position = 0;
    for size in batch_sizes(records) {
        let rest = &records[position..position + size];
        if rest.get(MAGIC_OFFSET).copied() != Some(MAGIC_V2 as u8) {
            return Err(ErrorCode::InvalidRecord.into());
        }
        if rest.len() < RECORD_BATCH_OVERHEAD {
            return Err(corrupt());
        }
        let i32_at = |at: usize| {
            rest.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map(i32::from_be_bytes)
                .ok_or_else(corrupt)
        };
        let base_offset = rest
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(-1, i64::from_be_bytes);
        if base_offset != 0 {
            return Err(invalid());
        }
        if size > limits.max_message_bytes {
            return Err(ErrorCode::MessageTooLarge.into());
        }
        let last_offset_delta = i32_at(LAST_OFFSET_DELTA_OFFSET)?;
        let count = i32_at(RECORD_COUNT_OFFSET)?;
        let options = DecodeOptions::default().with_max_decompressed_size(budget.0);
        let (batch, _) = RecordBatch::decode(rest, &options).map_err(|e| match e {
            RecordsError::InvalidRecordCount { .. } => invalid(),
            // Kafka's LZ4 reader throws an IOException, which reaches the
            // client as UNKNOWN_SERVER_ERROR.
            RecordsError::Lz4DependentBlocks { .. } => {
                Refusal::with_log_start(ErrorCode::UnknownServerError.code())
            }
            _ => corrupt(),
        })?;
        if count <= 0
            || last_offset_delta < 0
            || i64::from(last_offset_delta) + 1 != i64::from(count)
        {
            return Err(invalid());
        }
        if !batch.is_borrowed() {
            budget.0 = budget.0.saturating_sub(batch.records_section().len());
        }
        let create_time =
            limits.create_time && batch.header().timestamp_type() == TimestampType::CreateTime;
        for (record, index) in batch.records().zip(0..) {
            let record = record.map_err(|e| match e {
                RecordsError::RecordCountMismatch { .. } => invalid(),
                _ => corrupt(),
            })?;
            if limits.compacted && record.key.is_none() {
                record_errors.push((
                    index,
                    format!(
                        "Compacted topic cannot accept message without key in topic partition {}",
                        limits.partition
                    ),
                    ErrorCode::InvalidRecord,
                ));
            } else if create_time && record.timestamp != -1 {
                // Java's long arithmetic, which wraps.
                let diff = limits.now.wrapping_sub(record.timestamp);
                if diff > limits.before_max_ms || diff.wrapping_neg() > limits.after_max_ms {
                    record_errors.push((
                        index,
                        format!(
                            "Timestamp {} of message with offset {} is out of range. The timestamp should be within [{}, {}]",
                            record.timestamp,
                            record.offset,
                            limits.now.wrapping_sub(limits.before_max_ms),
                            limits.now.wrapping_add(limits.after_max_ms)
                        ),
                        ErrorCode::InvalidTimestamp,
                    ));
                }
            }
        }
        batches.push(CheckedBatch {
            header: *batch.header(),
            range: position..position + size,
        });
        position += size;
    }
    if !record_errors.is_empty() {
        return Err(refused_records(record_errors));
    }
    if batches.is_empty() {
        return Err(ErrorCode::InvalidRecord.into());
    }
    if position > limits.segment_bytes {
        return Err(ErrorCode::RecordListTooLarge.into());
    }
    Ok(batches)
}

/// Kafka's answer to records refused one by one: INVALID_TIMESTAMP when
/// any timestamp is, else INVALID_RECORD naming the first three.
fn refused_records(errors: Vec<(i32, String, ErrorCode)>) -> Refusal {
    let timestamp = errors
        .iter()
        .any(|(_, _, code)| *code == ErrorCode::InvalidTimestamp);
    let (code, message) = if timestamp {
        (
            ErrorCode::InvalidTimestamp,
            "One or more records have been rejected due to invalid timestamp".to_owned(),
        )
    } else {
        let first: Vec<String> = errors
            .iter()
            .take(3)
            .map(|(index, message, _)| {
                format!("RecordError(batchIndex={index}, message='{message}')")
            })
            .collect();
        (
            ErrorCode::InvalidRecord,
            format!(
                "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{}]",
                errors.len(),
                first.join(", ")
            ),
        )
    };
    Refusal {
        code: code.code(),
        message: Some(message),
        record_errors: errors
            .into_iter()
            .map(|(index, message, _)| (index, message))
            .collect(),
        with_log_start: true,
    }
}

/// Where a batch's length (after the offset and the length itself) sits.
const BATCH_LENGTH_OFFSET: usize = 8;

/// The records a partition's v2 batches hold, from their headers' counts
/// (what a Produce appended, for [`crate::control`]'s count of answers
/// dropped). Stops at the first batch that is not whole.
pub fn records_in(records: &[u8]) -> u64 {
    let mut total = 0;
    let mut rest = records;
    while let (Some(length), Some(count)) = (
        rest.get(BATCH_LENGTH_OFFSET..BATCH_LENGTH_OFFSET + 4),
        rest.get(RECORD_COUNT_OFFSET..RECORD_COUNT_OFFSET + 4),
    ) {
        let length = length.try_into().map(i32::from_be_bytes).unwrap_or(-1);
        let count = count.try_into().map(i32::from_be_bytes).unwrap_or(0);
        let Some(size) = usize::try_from(length).ok().map(|l| l + LOG_OVERHEAD) else {
            break;
        };
        if size > rest.len() {
            break;
        }
        total += u64::try_from(count).unwrap_or(0);
        rest = &rest[size..];
    }
    total
}

#[cfg(test)]
mod tests {
    use kafka_wire_records::RecordBatchBuilder;

    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn limits() -> Limits {
        Limits {
            partition: "t-0".into(),
            max_message_bytes: 1_048_588,
            segment_bytes: 1 << 30,
            compacted: false,
            create_time: true,
            before_max_ms: i64::MAX,
            after_max_ms: 3_600_000,
            now: NOW,
        }
    }

    fn batch(keys: &[Option<&[u8]>], timestamp: i64, value: usize) -> Vec<u8> {
        let mut builder = RecordBatchBuilder::new(0);
        let value = vec![7u8; value];
        for key in keys {
            builder
                .append(timestamp, *key, Some(&value), &[])
                .unwrap_or_else(|e| panic!("{e}"));
        }
        builder.build().unwrap_or_else(|e| panic!("{e}"))
    }

    fn check(records: &[u8], limits: &Limits) -> Result<usize, Refusal> {
        check_partition(records, &mut Budget(1 << 20), limits).map(|b| b.len())
    }

    #[test]
    fn a_batch_over_max_message_bytes_is_too_large_before_its_crc_is_read() {
        let mut records = batch(&[Some(b"k")], NOW, 100);
        let small = Limits {
            max_message_bytes: records.len() - 1,
            ..limits()
        };
        let last = records.len() - 1;
        records[last] ^= 0xff;
        assert_eq!(
            check(&records, &small),
            Err(ErrorCode::MessageTooLarge.into())
        );
        assert_eq!(
            check(&records, &limits()),
            Err(ErrorCode::CorruptMessage.into())
        );
        let exact = Limits {
            max_message_bytes: records.len(),
            ..limits()
        };
        records[last] ^= 0xff;
        assert_eq!(check(&records, &exact), Ok(1));
    }

    #[test]
    fn keyless_records_of_a_compacted_topic_are_refused_one_by_one() {
        let compacted = Limits {
            compacted: true,
            ..limits()
        };
        let records = batch(&[Some(b"a"), None, None, None, None], NOW, 1);
        let refusal = check(&records, &compacted)
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(refusal.code, ErrorCode::InvalidRecord.code());
        let indexes: Vec<i32> = refusal.record_errors.iter().map(|(i, _)| *i).collect();
        assert_eq!(indexes, [1, 2, 3, 4]);
        let why = "Compacted topic cannot accept message without key in topic partition t-0";
        assert!(refusal.record_errors.iter().all(|(_, m)| m == why));
        let message = refusal.message.unwrap_or_default();
        assert!(message.starts_with("One or more records have been rejected due to 4 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='Compacted"), "{message}");
        assert_eq!(message.matches("RecordError(").count(), 3);
        assert!(refusal.with_log_start);
    }

    #[test]
    fn timestamps_out_of_range_name_kafkas_bounds_as_java_computes_them() {
        let late = NOW + 3_600_001;
        let refusal = check(&batch(&[Some(b"k")], late, 1), &limits())
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(refusal.code, ErrorCode::InvalidTimestamp.code());
        // NOW - i64::MAX, as Java's long arithmetic gives it.
        let lower = NOW - i64::MAX;
        assert_eq!(
            refusal.record_errors,
            [(0, format!("Timestamp {late} of message with offset 0 is out of range. The timestamp should be within [{lower}, {}]", NOW + 3_600_000))]
        );
        assert_eq!(
            check(&batch(&[Some(b"k")], NOW + 3_600_000, 1), &limits()),
            Ok(1)
        );
        assert_eq!(check(&batch(&[Some(b"k")], 0, 1), &limits()), Ok(1));
        let log_append = Limits {
            create_time: false,
            ..limits()
        };
        assert_eq!(check(&batch(&[Some(b"k")], late, 1), &log_append), Ok(1));
    }

    #[test]
    fn a_request_partition_holds_one_whole_batch_of_magic_2() {
        let one = batch(&[Some(b"k")], NOW, 1);
        assert_eq!(check_request_records(9, &one), Ok(()));
        let mut two = one.clone();
        two.extend_from_slice(&one);
        let invalid = Err(Refusal::from(ErrorCode::InvalidRecord));
        assert_eq!(check_request_records(9, &two), invalid);
        assert_eq!(check_request_records(9, &one[..one.len() - 1]), invalid);
        assert_eq!(check_request_records(9, &[]), invalid);
        let mut magic = one.clone();
        magic[MAGIC_OFFSET] = 1;
        assert_eq!(check_request_records(9, &magic), invalid);
    }
}
