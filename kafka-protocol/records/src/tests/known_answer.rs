//! Byte layouts pinned independently of the encoder.

use super::fixtures::*;
use super::*;

/// Bitwise CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), written
/// from the definition to check the `crc32c` crate and the batch below.
fn crc32c_reference(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn crc_check_values() {
    // The published check values of CRC-32C and CRC-32 (IEEE).
    assert_eq!(crc32c_reference(b"123456789"), 0xE306_9283);
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(crc32fast::hash(b"123456789"), 0xCBF4_3926);
}

/// One record (key null, value "a") at offset 0, timestamp 1000, written
/// field by field from the protocol documentation. The CRC-32C is that of
/// bytes 21.. as computed by `crc32c_reference`, and pinned.
const HAND_BATCH: &str = "
    0000000000000000 00000039 ffffffff 02 ebf1884b
    0000 00000000 00000000000003e8 00000000000003e8
    ffffffffffffffff ffff ffffffff 00000001
    0e 00 00 00 01 02 61 00";

#[test]
fn hand_built_batch() {
    let bytes = hex(HAND_BATCH);
    assert_eq!(bytes.len(), 61 + 8);
    // Record: length 7 (zigzag 0x0e), attributes 0, timestamp delta 0,
    // offset delta 0, key length -1 (0x01), value length 1 (0x02), "a",
    // no headers. batchLength = 49 + 8 = 0x39.
    assert_eq!(crc32c_reference(&bytes[21..]), 0xebf1_884b);

    let mut builder = RecordBatchBuilder::new(0);
    builder.append(1000, None, Some(b"a"), &[]).unwrap();
    assert_eq!(builder.build().unwrap(), bytes);

    let batch = only_batch(&bytes);
    let header = batch.header();
    assert_eq!(header.crc, 0xebf1_884b);
    assert_eq!(
        (header.base_offset, header.batch_length, header.record_count),
        (0, 57, 1)
    );
    assert_eq!((header.base_timestamp, header.max_timestamp), (1000, 1000));
    let records: Vec<_> = batch.records().collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!((records[0].offset, records[0].timestamp), (0, 1000));
    assert_eq!((records[0].key, records[0].value), (None, Some(&b"a"[..])));
}

fn small_records() -> Vec<OwnedRecord> {
    let t0 = 1_700_000_000_000;
    vec![
        OwnedRecord {
            offset: 0,
            timestamp: t0,
            key: Some(b"k0".to_vec()),
            value: Some(b"v0".to_vec()),
            headers: vec![("h1".into(), Some(b"x".to_vec())), ("h2".into(), None)],
        },
        OwnedRecord {
            offset: 1,
            timestamp: t0 + 5,
            key: None,
            value: Some(b"value-1".to_vec()),
            headers: vec![],
        },
        OwnedRecord {
            offset: 2,
            timestamp: t0 - 10,
            key: Some(b"k2".to_vec()),
            value: None,
            headers: vec![],
        },
    ]
}

fn many_records() -> Vec<OwnedRecord> {
    (0..20)
        .map(|i| OwnedRecord {
            offset: i,
            timestamp: 1_700_000_000_000 + i,
            key: Some(format!("key-{i}").into_bytes()),
            value: Some(format!("value {i} ").repeat(8).into_bytes()),
            headers: vec![("n".into(), Some(i.to_string().into_bytes()))],
        })
        .collect()
}

#[test]
fn kafka_python_uncompressed_batch() {
    let bytes = hex(V2_NONE);
    let batch = only_batch(&bytes);
    let header = batch.header();
    assert_eq!(header.magic, 2);
    assert!(header.is_transactional() && !header.is_control());
    assert_eq!(
        (
            header.producer_id,
            header.producer_epoch,
            header.base_sequence
        ),
        (1234, 5, 7)
    );
    assert_eq!(header.last_offset_delta, 2);
    assert_eq!(header.base_timestamp, 1_700_000_000_000);
    assert_eq!(header.max_timestamp, 1_700_000_000_005);
    assert!(batch.is_borrowed());
    assert_eq!(owned_records(&batch), small_records());

    // Our builder writes the same bytes for the same input.
    let mut builder = RecordBatchBuilder::new(0)
        .partition_leader_epoch(header.partition_leader_epoch)
        .producer_id(1234)
        .producer_epoch(5)
        .base_sequence(7)
        .transactional(true);
    append_all(&mut builder, &small_records());
    assert_eq!(builder.build().unwrap(), bytes);
}

#[test]
fn uncompressed_records_borrow_from_the_input() {
    let bytes = hex(V2_NONE);
    let range = bytes.as_ptr_range();
    let batch = only_batch(&bytes);
    for record in batch.records() {
        let record = record.unwrap();
        let slices = record
            .key
            .into_iter()
            .chain(record.value)
            .chain(record.headers.iter().flat_map(|h| h.value))
            .chain(record.headers.iter().map(|h| h.key.as_bytes()));
        for slice in slices {
            assert!(
                range.contains(&slice.as_ptr()),
                "slice not borrowed from the input"
            );
        }
    }
}

#[test]
fn kafka_python_compressed_batches() {
    for (name, fixture, codec) in [
        ("gzip", V2_GZIP, Compression::Gzip),
        ("snappy (xerial)", V2_SNAPPY_XERIAL, Compression::Snappy),
        ("lz4", V2_LZ4, Compression::Lz4),
        ("zstd", V2_ZSTD, Compression::Zstd),
    ] {
        let bytes = hex(fixture);
        if !codec.is_enabled() {
            let error = RecordSet::parse(&bytes, &DecodeOptions::default()).unwrap_err();
            assert_eq!(error, RecordsError::CodecNotEnabled { codec });
            continue;
        }
        let batch = only_batch(&bytes);
        assert_eq!(batch.compression(), codec, "{name}");
        assert!(!batch.is_borrowed());
        assert_eq!(owned_records(&batch), many_records(), "{name}");
    }
}

#[cfg(feature = "snappy")]
#[test]
fn kafka_python_snappy_is_xerial_framed() {
    // Check that the fixture really exercises the xerial path: the records
    // section (after the 61-byte header) starts with the xerial magic.
    let bytes = hex(V2_SNAPPY_XERIAL);
    assert_eq!(&bytes[61..69], b"\x82SNAPPY\x00");
}
