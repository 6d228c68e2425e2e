//! Walking a blob one batch at a time: the count check before the next
//! batch and the decompression budget.

use super::*;

/// A v2 batch holding `records` (one minimal record per count by default),
/// compressed with `codec`, declaring `count` records.
fn compressed_batch(codec: Compression, count: i32, records: &[u8]) -> Vec<u8> {
    let data = compress(codec, records).unwrap();
    raw_batch(codec.id().into(), count, &data)
}

/// One minimal record: length 6, attributes, deltas, null key and value,
/// no headers.
const MINIMAL_RECORD: [u8; 7] = [0x0c, 0, 0, 0, 1, 1, 0];

#[test]
fn a_count_mismatch_fails_before_the_next_batch_is_decompressed() {
    let codec = Compression::Gzip;
    if !codec.is_enabled() {
        return;
    }
    // Count 0, one record: the records disagree with the header.
    let mut blob = compressed_batch(codec, 0, &MINIMAL_RECORD);
    let offset = blob.len();
    // Then a batch whose data is not gzip at all: decompressing it fails.
    blob.extend(raw_batch(codec.id().into(), 1, b"not gzip"));
    let mismatch = RecordsError::RecordCountMismatch {
        offset: 0,
        declared: 0,
        found: 0,
        trailing_bytes: true,
    };
    let mut batches = Batches::new(&blob, &DecodeOptions::default());
    assert_eq!(
        batches.next().map(|b| b.map(drop)),
        Some(Err(mismatch.clone()))
    );
    assert_eq!(batches.next(), None);
    assert_eq!(batches.position(), 0);
    assert_eq!(
        RecordSet::parse(&blob, &DecodeOptions::default()),
        Err(mismatch)
    );
    // The second batch alone does fail to decompress.
    assert!(matches!(
        RecordSet::parse(&blob[offset..], &DecodeOptions::default()),
        Err(RecordsError::DecompressionFailed { .. })
    ));
}

#[test]
fn the_budget_covers_the_whole_blob() {
    let codec = Compression::Gzip;
    if !codec.is_enabled() {
        return;
    }
    // One record with a 100,000-byte value, compressed: about 100 KB each.
    let mut record = Vec::new();
    let value = vec![b'x'; 100_000];
    let mut body = vec![0u8, 0, 0, 1];
    varint::put_varint(&mut body, value.len() as i32);
    body.extend_from_slice(&value);
    body.push(0);
    varint::put_varint(&mut record, body.len() as i32);
    record.extend_from_slice(&body);
    let batch = compressed_batch(codec, 1, &record);
    let blob = batch.repeat(3);

    let roomy = DecodeOptions::new().with_max_total_decompressed_size(3 * record.len());
    let set = RecordSet::parse(&blob, &roomy).unwrap();
    assert_eq!(set.batches.len(), 3);
    let mut batches = Batches::new(&blob, &roomy);
    assert_eq!(batches.by_ref().count(), 3);
    assert_eq!(batches.decompressed_bytes(), 3 * record.len());

    let tight = roomy.with_max_total_decompressed_size(3 * record.len() - 1);
    assert_eq!(
        RecordSet::parse(&blob, &tight),
        Err(RecordsError::DecompressionBudgetExceeded {
            codec,
            offset: 2 * batch.len() + 61,
            budget: 3 * record.len() - 1,
        })
    );
    // The per-batch limit is still its own error.
    let small = roomy.with_max_decompressed_size(record.len() - 1);
    assert!(matches!(
        RecordSet::parse(&blob, &small),
        Err(RecordsError::DecompressedSizeExceeded { offset: 61, .. })
    ));
}
