//! Checks the record batches of a Produce request as Kafka's broker does,
//! before anything is appended and without the state lock: v2 batches
//! only, counts that agree with themselves and with the records, CRC, and
//! every codec decompressed within one budget for the whole request.

use kafka_wire::ErrorCode;
use kafka_wire_records::{
    BatchHeader, DecodeOptions, RecordBatch, RecordsError, LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V2,
    RECORD_BATCH_OVERHEAD,
};

/// Where `lastOffsetDelta` sits in a v2 batch.
const LAST_OFFSET_DELTA_OFFSET: usize = 23;
/// Where the record count sits in a v2 batch.
const RECORD_COUNT_OFFSET: usize = 57;

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

/// Checks one partition's records; the error is Kafka's for the partition.
pub fn check_partition(records: &[u8], budget: &mut Budget) -> Result<Vec<CheckedBatch>, i16> {
    let corrupt = ErrorCode::CorruptMessage.code();
    let invalid = ErrorCode::InvalidRecord.code();
    let mut batches = Vec::new();
    let mut position = 0;
    while position < records.len() {
        let rest = &records[position..];
        if rest.get(MAGIC_OFFSET).copied() != Some(MAGIC_V2 as u8) {
            return Err(ErrorCode::UnsupportedForMessageFormat.code());
        }
        if rest.len() < RECORD_BATCH_OVERHEAD {
            return Err(corrupt);
        }
        let i32_at = |at: usize| {
            rest.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map(i32::from_be_bytes)
                .ok_or(corrupt)
        };
        let last_offset_delta = i32_at(LAST_OFFSET_DELTA_OFFSET)?;
        let count = i32_at(RECORD_COUNT_OFFSET)?;
        if count <= 0
            || last_offset_delta < 0
            || i64::from(last_offset_delta) + 1 != i64::from(count)
        {
            return Err(invalid);
        }
        let options = DecodeOptions::default().with_max_decompressed_size(budget.0);
        let (batch, size) = RecordBatch::decode(rest, &options).map_err(|e| match e {
            RecordsError::InvalidRecordCount { .. } => invalid,
            // Kafka's LZ4 reader throws an IOException, which reaches the
            // client as UNKNOWN_SERVER_ERROR.
            RecordsError::Lz4DependentBlocks { .. } => ErrorCode::UnknownServerError.code(),
            _ => corrupt,
        })?;
        if !batch.is_borrowed() {
            budget.0 = budget.0.saturating_sub(batch.records_section().len());
        }
        for record in batch.records() {
            record.map_err(|e| match e {
                RecordsError::RecordCountMismatch { .. } => invalid,
                _ => corrupt,
            })?;
        }
        batches.push(CheckedBatch {
            header: *batch.header(),
            range: position..position + size,
        });
        position += size;
    }
    if batches.is_empty() {
        return Err(corrupt);
    }
    Ok(batches)
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
