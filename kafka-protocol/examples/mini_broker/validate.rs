//! Checks the record batches of a Produce request the way Kafka's broker
//! does, before anything is appended, and without the log lock.
//!
//! Each partition's records must be v2 batches whose header agrees with
//! itself (a positive record count, and a `lastOffsetDelta` of exactly
//! count - 1) and whose records agree with the header (exactly that many
//! records, each well formed). The header is checked before the batch is
//! decompressed, so a batch claiming no records is refused for the price of
//! reading 61 bytes. Decompression draws on one budget for the whole
//! request, so many batches cannot add up to more than it.

use kafka_wire_records::{
    BatchHeader, DecodeOptions, RecordBatch, RecordsError, MAGIC_OFFSET, MAGIC_V2,
    RECORD_BATCH_OVERHEAD,
};

use crate::errors;

/// Where `lastOffsetDelta` sits in a v2 batch.
const LAST_OFFSET_DELTA_OFFSET: usize = 23;
/// Where the record count sits in a v2 batch.
const RECORD_COUNT_OFFSET: usize = 57;

/// A batch that passed every check: its header, and where it is in the
/// partition's records.
pub struct CheckedBatch {
    /// The decoded header.
    pub header: BatchHeader,
    /// The batch's position in the partition's records.
    pub range: std::ops::Range<usize>,
}

/// How many decompressed bytes a request may still produce.
pub struct Budget {
    left: usize,
}

impl Budget {
    /// A budget of `bytes` decompressed bytes.
    pub fn new(bytes: usize) -> Self {
        Budget { left: bytes }
    }
}

/// Checks every batch of one partition's records, in order. The error is
/// the Kafka error code for the partition:
/// - UNSUPPORTED_FOR_MESSAGE_FORMAT for a batch that is not v2;
/// - INVALID_RECORD for a header that disagrees with itself, or records that
///   disagree with the header's count;
/// - CORRUPT_MESSAGE for a batch that does not decode (CRC, truncation, a
///   malformed record), or that would take more than what is left of the
///   request's decompression budget.
pub fn check_partition(records: &[u8], budget: &mut Budget) -> Result<Vec<CheckedBatch>, i16> {
    let mut batches = Vec::new();
    let mut position = 0;
    while position < records.len() {
        let rest = &records[position..];
        if rest.get(MAGIC_OFFSET).copied() != Some(MAGIC_V2 as u8) {
            return Err(errors::UNSUPPORTED_FOR_MESSAGE_FORMAT);
        }
        check_header_counts(rest)?;
        // The limit is whatever the request has left: a batch that would
        // decompress past it fails while decompressing, having allocated no
        // more than the limit.
        let options = DecodeOptions::default().with_max_decompressed_size(budget.left);
        let (batch, size) = RecordBatch::decode(rest, &options).map_err(|e| match e {
            RecordsError::InvalidRecordCount { .. } => errors::INVALID_RECORD,
            _ => errors::CORRUPT_MESSAGE,
        })?;
        if !batch.is_borrowed() {
            budget.left = budget.left.saturating_sub(batch.records_section().len());
        }
        check_records(&batch)?;
        batches.push(CheckedBatch {
            header: *batch.header(),
            range: position..position + size,
        });
        position += size;
    }
    Ok(batches)
}

/// The count and `lastOffsetDelta` checks Kafka makes on a v2 header, read
/// straight from the bytes so that a batch failing them is never
/// decompressed.
fn check_header_counts(batch: &[u8]) -> Result<(), i16> {
    if batch.len() < RECORD_BATCH_OVERHEAD {
        return Err(errors::CORRUPT_MESSAGE);
    }
    let i32_at = |at: usize| {
        batch
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(i32::from_be_bytes)
            .ok_or(errors::CORRUPT_MESSAGE)
    };
    let last_offset_delta = i32_at(LAST_OFFSET_DELTA_OFFSET)?;
    let count = i32_at(RECORD_COUNT_OFFSET)?;
    // Kafka: "Invalid reported count for record batch", then "Inconsistent
    // batch offset range and count of records". A negative delta (down to
    // -2^31) would move the partition's next offset backwards.
    if count <= 0 || last_offset_delta < 0 || i64::from(last_offset_delta) + 1 != i64::from(count) {
        return Err(errors::INVALID_RECORD);
    }
    Ok(())
}

/// Decodes every record, which checks that there are exactly as many as the
/// header says and that each is well formed.
fn check_records(batch: &RecordBatch<'_>) -> Result<(), i16> {
    for record in batch.records() {
        record.map_err(|e| match e {
            RecordsError::RecordCountMismatch { .. } => errors::INVALID_RECORD,
            _ => errors::CORRUPT_MESSAGE,
        })?;
    }
    Ok(())
}
