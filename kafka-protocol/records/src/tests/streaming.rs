//! Walking a blob one batch at a time: the count check before the next
//! batch, the decompression budget, and the streaming JSON writer.

#[cfg(feature = "json")]
use super::fixtures::*;
#[cfg(feature = "json")]
use super::legacy::message;
use super::*;

/// Every fixture, each alone and all back to back, and batches with
/// headers, control records, unreadable bytes and none at all.
#[cfg(feature = "json")]
fn fixture_blobs() -> Vec<Vec<u8>> {
    let all = [
        V2_NONE,
        V2_GZIP,
        V2_SNAPPY_XERIAL,
        V2_LZ4,
        V2_ZSTD,
        V0_NONE,
        V1_NONE,
        V1_GZIP_WRAPPER,
        V1_SNAPPY_WRAPPER,
        V0_LZ4_OLD_KAFKA_WRAPPER,
    ];
    let mut blobs: Vec<Vec<u8>> = all.iter().map(|text| hex(text)).collect();

    let mut builder = RecordBatchBuilder::new(7);
    let headers = [
        Header::new("h\n\"1\u{e9}", Some(b"v")),
        Header::new("", None),
        Header::new("bin", Some(&[0xff, 0, 0x80])),
    ];
    builder
        .append(1, Some(b"k\t\x01"), Some(&[0xc3, 0x28]), &headers)
        .unwrap();
    builder.append(2, None, None, &[]).unwrap();
    builder
        .append(3, Some(b""), Some(b"line\nbreak"), &headers[..1])
        .unwrap();
    blobs.push(builder.build().unwrap());
    let mut control = RecordBatchBuilder::new(9).transactional(true);
    control
        .append_control(4, ControlRecord::new(ControlRecordType::Abort), None)
        .unwrap();
    blobs.push(control.build().unwrap());
    blobs.push(RecordBatchBuilder::new(0).build().unwrap());
    blobs.push(message(5, 1, 0, 6, Some(b"\xff"), Some(b"\"q\"")));

    let joined: Vec<u8> = blobs.concat();
    // The same with an incomplete batch at the end.
    let mut tail = joined.clone();
    tail.extend_from_slice(&hex(V2_NONE)[..40]);
    blobs.extend([joined, tail, Vec::new()]);
    blobs
}

#[cfg(feature = "json")]
fn streamed(blob: &[u8], pretty: bool) -> Vec<u8> {
    let mut out = Vec::new();
    write_records_json(blob, &DecodeOptions::default(), &mut out, pretty).unwrap();
    out
}

#[cfg(feature = "json")]
#[test]
fn the_json_writer_writes_what_serde_json_prints() {
    if !Compression::ALL.iter().all(|codec| codec.is_enabled()) {
        return;
    }
    for blob in fixture_blobs() {
        let value = records_to_json(&blob, &DecodeOptions::default()).unwrap();
        let pretty = serde_json::to_vec_pretty(&value).unwrap();
        let compact = serde_json::to_vec(&value).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&streamed(&blob, true)),
            String::from_utf8_lossy(&pretty)
        );
        assert_eq!(streamed(&blob, false), compact);
    }
}

#[cfg(feature = "json")]
#[test]
fn the_json_writer_reports_the_first_error() {
    let mut blob = hex(V2_NONE);
    let last = blob.len() - 1;
    blob[last] ^= 0xff;
    let mut out = Vec::new();
    let error = write_records_json(&blob, &DecodeOptions::default(), &mut out, true);
    assert!(matches!(
        error,
        Err(WriteJsonError::Records(RecordsError::CrcMismatch { .. }))
    ));
}

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
    kafka_wire::runtime::varint::put_varint(&mut body, value.len() as i32);
    body.extend_from_slice(&value);
    body.push(0);
    kafka_wire::runtime::varint::put_varint(&mut record, body.len() as i32);
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
