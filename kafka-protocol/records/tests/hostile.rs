//! Hostile record batches and record blobs: every one must give a typed
//! error (never a panic) at the right offset, while the heap stays bounded.
//!
//! A tracking global allocator counts the bytes each thread has allocated;
//! every decode below runs inside [`measure`], which asserts that the peak
//! heap during the decode stays below `4 * n + 64 KiB` for an input of `n`
//! bytes, plus the decompression limit for compressed record batches.
//! Streaming a blob stays within the per-batch limit plus 64 MiB, whatever
//! its number of batches and records.

use kafka_wire_records::{
    compress, Batches, Compression, DecodeOptions, Header, LegacyEntry, RecordBatch,
    RecordBatchBuilder, RecordSet, RecordsError,
};
#[cfg(feature = "json")]
use kafka_wire_records::{records_to_json, write_records_json, WriteJsonError};
use kafka_wire_test_support::heap::{measure, peak_during, Tracking};
use kafka_wire_test_support::wire::Wire;

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Input size for the amplification cases.
const BIG: usize = 100_000;

// ---------------------------------------------------------------------------
// Record batches.

/// CRC-32C (Castagnoli), bit by bit: enough for a few test batches.
fn crc32c(data: &[u8]) -> u32 {
    crc32(data, 0x82f6_3b78)
}

/// A reflected CRC-32 with `poly` (0xEDB88320 is the IEEE one).
fn crc32(data: &[u8], poly: u32) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ poly
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Offsets in a v2 batch.
const BATCH_LENGTH_AT: usize = 8;
const CRC_AT: usize = 17;
const ATTRIBUTES_AT: usize = 21;
const RECORD_COUNT_AT: usize = 57;
const RECORDS_AT: usize = 61;

/// An uncompressed v2 batch with `count` records.
fn sample_batch(count: u8, codec: Compression) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(100).compression(codec);
    for i in 0..count {
        let result = builder.append(
            1_700_000_000_000 + i64::from(i),
            Some(&[i]),
            Some(b"value"),
            &[Header::new("h", Some(b"v"))],
        );
        assert!(result.is_ok());
    }
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

/// A v2 batch with `count` declared records and `records` as its records
/// section, with the right length and CRC.
fn batch_with_records(count: i32, records: &[u8]) -> Vec<u8> {
    let mut batch = sample_batch(0, Compression::None);
    batch.truncate(RECORDS_AT);
    batch[RECORD_COUNT_AT..RECORDS_AT].copy_from_slice(&count.to_be_bytes());
    batch.extend_from_slice(records);
    fix_batch(&mut batch);
    batch
}

/// Recomputes a batch's length and CRC after editing it.
fn fix_batch(batch: &mut [u8]) {
    let length = (batch.len() - 12) as i32;
    batch[BATCH_LENGTH_AT..BATCH_LENGTH_AT + 4].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c(&batch[ATTRIBUTES_AT..]);
    batch[CRC_AT..ATTRIBUTES_AT].copy_from_slice(&crc.to_be_bytes());
}

/// Options with a 1 MiB decompression limit.
const OPTIONS: DecodeOptions = DecodeOptions::new().with_max_decompressed_size(1 << 20);

/// Heap allowed on top of the usual bound for a blob: twice the
/// decompression limit when its first entry is a compressed v2 batch, else
/// nothing. Twice, because the output buffer doubles as it grows and a
/// moving reallocation holds the old and the new buffer for a moment (a
/// 1 MiB limit peaks at about 1.6 MiB with the decoder's own state).
fn decompression_allowance(blob: &[u8]) -> usize {
    let compressed = blob.get(16) == Some(&2)
        && blob
            .get(ATTRIBUTES_AT + 1)
            .is_some_and(|attributes| attributes & 7 != 0);
    if compressed {
        2 * OPTIONS.max_decompressed_size
    } else {
        0
    }
}

/// Parses a records blob and decodes every record, measuring the heap.
fn parse_all(blob: &[u8]) -> Result<(usize, Option<usize>), RecordsError> {
    measure(blob.len(), decompression_allowance(blob), "records", || {
        let set = RecordSet::parse(blob, &OPTIONS)?;
        set.validate()?;
        Ok((set.batches.len(), set.partial_tail))
    })
}

/// Decodes one batch and all its records, measuring the heap.
fn decode_batch(batch: &[u8]) -> Result<usize, RecordsError> {
    measure(
        batch.len(),
        decompression_allowance(batch),
        "record batch",
        || {
            let (batch, _) = RecordBatch::decode(batch, &OPTIONS)?;
            batch.records().try_fold(0, |n, r| r.map(|_| n + 1))
        },
    )
}

#[test]
fn sample_batches_decode() {
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let batch = sample_batch(3, codec);
        assert_eq!(decode_batch(&batch), Ok(3), "{codec}");
        assert_eq!(parse_all(&batch), Ok((1, None)), "{codec}");
    }
}

#[test]
fn record_batch_huge_lengths() {
    // batchLength 0x7FFFFFFF: a partial tail in a blob, truncated alone.
    let mut batch = sample_batch(1, Compression::None);
    let len = batch.len();
    batch[BATCH_LENGTH_AT..BATCH_LENGTH_AT + 4].copy_from_slice(&i32::MAX.to_be_bytes());
    assert_eq!(parse_all(&batch), Ok((0, Some(len))));
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::Truncated {
            context: "record batch",
            offset: 12,
            needed: 0x7fff_ffff,
            available: len - 12,
        })
    );

    // recordCount 0x7FFFFFFF, with a valid CRC.
    let mut batch = sample_batch(1, Compression::None);
    batch[RECORD_COUNT_AT..RECORDS_AT].copy_from_slice(&i32::MAX.to_be_bytes());
    fix_batch(&mut batch);
    let error = RecordsError::InvalidRecordCount {
        offset: RECORD_COUNT_AT,
        count: i32::MAX,
    };
    assert_eq!(decode_batch(&batch), Err(error.clone()));
    assert_eq!(parse_all(&batch), Err(error));

    // A record length of 0x7FFFFFFF (zigzag varint).
    let records = Wire::new().varint(i32::MAX).raw(&[0; 8]).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::Truncated {
            context: "record",
            offset: RECORDS_AT + 5,
            needed: 0x7fff_ffff,
            available: 8,
        })
    );

    // Inside a record: key length, value length and header count of
    // 0x7FFFFFFF all overrun the record's declared length.
    for (what, body) in [
        (
            "key",
            Wire::new().i8(0).varint(0).varint(0).varint(i32::MAX),
        ),
        (
            "value",
            Wire::new()
                .i8(0)
                .varint(0)
                .varint(0)
                .varint(-1)
                .varint(i32::MAX),
        ),
        (
            "header count",
            Wire::new()
                .i8(0)
                .varint(0)
                .varint(0)
                .varint(-1)
                .varint(-1)
                .varint(i32::MAX),
        ),
    ] {
        let body = body.raw(&[0; 4]).bytes();
        let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
        let batch = batch_with_records(1, &records);
        assert_eq!(
            decode_batch(&batch),
            Err(RecordsError::LengthMismatch {
                context: "record",
                offset: RECORDS_AT,
                declared: body.len() as i64,
                actual: body.len(),
            }),
            "{what}"
        );
    }

    // A legacy (magic 1) message whose key claims 0x7FFFFFFF bytes.
    let body = Wire::new()
        .i8(1) // magic
        .i8(0) // attributes
        .i64(0) // timestamp
        .i32(i32::MAX) // key length
        .raw(&[0; 8])
        .bytes();
    let crc = crc32(&body, 0xedb8_8320);
    let message = Wire::new()
        .i64(0)
        .i32(body.len() as i32 + 4)
        .i32(crc as i32)
        .raw(&body)
        .bytes();
    assert_eq!(
        measure(message.len(), 0, "legacy", || LegacyEntry::decode(
            &message, &OPTIONS
        )
        .map(|_| ())),
        Err(RecordsError::LengthMismatch {
            context: "message",
            offset: 0,
            declared: body.len() as i64 + 4,
            actual: body.len() + 4,
        })
    );
}

#[test]
fn decompression_bombs_stop_at_the_limit() {
    let value = vec![0u8; 4 << 20];
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut builder = RecordBatchBuilder::new(0).compression(codec);
        assert!(builder.append(0, None, Some(&value), &[]).is_ok());
        let batch = builder.build().unwrap_or_else(|e| panic!("{e}"));
        assert!(batch.len() < 1 << 20, "{codec}: {} bytes", batch.len());
        let error = decode_batch(&batch).expect_err("a 4 MiB batch decoded");
        assert!(
            matches!(
                error,
                RecordsError::DecompressedSizeExceeded { limit, .. } if limit == 1 << 20
            ),
            "{codec}: {error}"
        );
        assert_eq!(parse_all(&batch), Err(error));
    }
}

#[test]
fn record_batch_bad_varints_and_lengths() {
    // A record length varint running past five bytes.
    let records = [0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0];
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::VarintTooLong { offset: RECORDS_AT })
    );
    // A timestamp delta varlong running past ten bytes.
    let body = Wire::new().i8(0).raw(&[0xff; 11]).raw(&[0; 4]).bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::VarintTooLong {
            offset: RECORDS_AT + 2
        })
    );
    // A negative record length.
    let records = Wire::new().varint(-1).raw(&[0; 8]).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::NegativeLength {
            context: "record length",
            offset: RECORDS_AT,
            length: -1,
        })
    );
    // A key length of -2 is a null key, as Kafka reads it; the four bytes
    // after it are then more than the record's length holds.
    let body = Wire::new()
        .i8(0)
        .varint(0)
        .varint(0)
        .varint(-2)
        .raw(&[0; 4])
        .bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert!(matches!(
        decode_batch(&batch),
        Err(RecordsError::LengthMismatch {
            context: "record",
            ..
        })
    ));
    // A header key that is not UTF-8.
    let body = Wire::new()
        .i8(0)
        .varint(0)
        .varint(0)
        .varint(-1)
        .varint(-1)
        .varint(1)
        .varint(2)
        .raw(&[0xc3, 0x28])
        .varint(-1)
        .bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::InvalidHeaderKey {
            offset: RECORDS_AT + 7
        })
    );
}

#[test]
fn record_batch_truncated_at_every_byte() {
    for codec in [Compression::None, Compression::Gzip, Compression::Zstd] {
        let batch = sample_batch(3, codec);
        for len in 0..batch.len() {
            let prefix = &batch[..len];
            // In a blob an incomplete last batch is a partial tail...
            assert_eq!(
                parse_all(prefix),
                Ok((0, (len > 0).then_some(len))),
                "{codec} prefix {len}"
            );
            // ...and on its own it is truncated.
            assert!(
                matches!(decode_batch(prefix), Err(RecordsError::Truncated { .. })),
                "{codec} prefix {len}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Heap amplification.

/// The same for record headers: a count up to half the bytes left must not
/// be reserved whole (32 bytes per header) before the first header fails.
#[test]
fn claimed_record_header_count_does_not_preallocate() {
    let body = Wire::new()
        .i8(0)
        .varint(0)
        .varint(0)
        .varint(-1)
        .varint(-1)
        .varint((BIG / 2) as i32)
        .raw(&vec![0x03; BIG])
        .bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::NegativeLength {
            context: "header key length",
            offset: 72,
            length: -2,
        })
    );
}

// ---------------------------------------------------------------------------
// Streaming record blobs: walked one batch at a time, any blob is decoded
// and printed within the per-batch decompression limit plus 64 MiB of heap,
// whatever the number of batches and records (the shapes of issue 13).

/// Heap allowed on top of the per-batch decompression limit.
const STREAM_SLACK: usize = 64 << 20;

/// What the `records` command does, printing nowhere: every batch and record
/// checked first, then the JSON written as it decodes.
#[cfg(feature = "json")]
fn print_records(blob: &[u8], options: &DecodeOptions) -> Result<(), RecordsError> {
    for batch in Batches::new(blob, options) {
        batch?;
    }
    match write_records_json(blob, options, &mut std::io::sink(), true) {
        Ok(()) => Ok(()),
        Err(WriteJsonError::Records(error)) => Err(error),
        Err(WriteJsonError::Io(error)) => panic!("writing to a sink failed: {error}"),
    }
}

/// Runs `f` and asserts that the heap stayed below the per-batch limit of
/// `options` plus 64 MiB, and below `tighter` when given.
fn streamed<R>(
    options: &DecodeOptions,
    tighter: Option<usize>,
    what: &str,
    f: impl FnOnce() -> R,
) -> R {
    let (result, peak) = peak_during(f);
    let limit = options.max_decompressed_size + STREAM_SLACK;
    let limit = tighter.map_or(limit, |tighter| tighter.min(limit));
    assert!(
        peak <= limit,
        "{what}: peaked at {peak} heap bytes (limit {limit})"
    );
    result
}

/// A v2 batch declaring `count` records, whose records section is `records`
/// compressed with `codec`.
fn compressed_batch(codec: Compression, count: i32, records: &[u8]) -> Vec<u8> {
    let compressed = compress(codec, records).unwrap_or_else(|e| panic!("{e}"));
    let mut batch = batch_with_records(count, &compressed);
    batch[ATTRIBUTES_AT + 1] = codec.id();
    fix_batch(&mut batch);
    batch
}

/// Eight zstd batches of record count 0, each expanding to exactly the
/// default 64 MiB limit. The first batch's records disagree with its count,
/// which is the error, found before the second batch is decompressed; all
/// eight used to be decompressed and held first (520 MiB).
#[test]
fn zstd_bombs_of_record_count_0_fail_at_the_first_batch() {
    let options = DecodeOptions::default();
    let bomb = compressed_batch(
        Compression::Zstd,
        0,
        &vec![0u8; options.max_decompressed_size],
    );
    assert!(bomb.len() < 4096, "{} bytes", bomb.len());
    let blob = bomb.repeat(8);
    let error = RecordsError::RecordCountMismatch {
        offset: 0,
        declared: 0,
        found: 0,
        trailing_bytes: true,
    };
    #[cfg(feature = "json")]
    {
        let printed = streamed(&options, None, "printing bombs", || {
            print_records(&blob, &options)
        });
        assert_eq!(printed, Err(error.clone()));
        let json = streamed(&options, None, "bombs to JSON", || {
            records_to_json(&blob, &options).map(drop)
        });
        assert_eq!(json, Err(error.clone()));
    }
    let parsed = streamed(&options, None, "parsing bombs", || {
        RecordSet::parse(&blob, &options).map(drop)
    });
    assert_eq!(parsed, Err(error));
}

/// One minimal record: length 6, attributes, deltas, null key and value,
/// no headers.
#[cfg(feature = "json")]
const MINIMAL_RECORD: [u8; 7] = [0x0c, 0, 0, 0, 1, 1, 0];

/// 1.2 million minimal records (8.4 MB), zstd-compressed to under 1 KB and
/// uncompressed. Printing them used to hold every record as a JSON value
/// (2.26 GB); now it holds the decompressed batch and nothing per record.
#[test]
#[cfg(feature = "json")]
fn a_batch_of_1_2_million_minimal_records_is_printed_in_bounded_memory() {
    let options = DecodeOptions::default();
    let count = 1_200_000;
    let records = MINIMAL_RECORD.repeat(count);
    let zstd = compressed_batch(Compression::Zstd, count as i32, &records);
    assert!(zstd.len() < 2048, "{} bytes", zstd.len());
    // The decompressed section, whose buffer doubles while decompressing
    // and so may hold its old and new copies for a moment (16 + 8 MiB).
    let held = 3 * records.len() + (1 << 20);
    let printed = streamed(&options, Some(held), "1.2M zstd records", || {
        print_records(&zstd, &options)
    });
    assert_eq!(printed, Ok(()));

    // Uncompressed, nothing is held at all.
    let plain = batch_with_records(count as i32, &records);
    let printed = streamed(&options, Some(1 << 20), "1.2M plain records", || {
        print_records(&plain, &options)
    });
    assert_eq!(printed, Ok(()));
}

/// A legacy magic 1 message of `value`, CRC-32 included.
fn legacy_message(offset: i64, attributes: i8, value: &[u8]) -> Vec<u8> {
    let mut body = vec![1u8, attributes as u8];
    body.extend_from_slice(&0i64.to_be_bytes());
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&(value.len() as i32).to_be_bytes());
    body.extend_from_slice(value);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    out.extend_from_slice(&crc32(&body, 0xedb8_8320).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Sixteen legacy gzip wrappers, each expanding to the decompression limit
/// (4 MiB here, to keep the test quick; 64 MiB in issue 13, where they
/// aborted the tool): one wrapper's messages are held at a time, where all
/// sixteen used to be.
#[test]
fn legacy_gzip_wrappers_are_held_one_at_a_time() {
    let limit = 4 << 20;
    let options = DecodeOptions::default().with_max_decompressed_size(limit);
    let inner = legacy_message(0, 0, &vec![0u8; limit - 34]);
    assert_eq!(inner.len(), limit);
    let gzipped = compress(Compression::Gzip, &inner).unwrap_or_else(|e| panic!("{e}"));
    let wrapper = legacy_message(0, 1, &gzipped);
    let blob = wrapper.repeat(16);
    // One decompressed wrapper, its buffer's growth, and the decoder.
    let held = Some(2 * limit + (1 << 20));
    #[cfg(feature = "json")]
    {
        let printed = streamed(&options, held, "printing wrappers", || {
            print_records(&blob, &options)
        });
        assert_eq!(printed, Ok(()));
    }
    let walked = streamed(&options, held, "walking wrappers", || {
        Batches::new(&blob, &options).try_fold(0, |n, entry| entry.map(|_| n + 1))
    });
    assert_eq!(walked, Ok(16));
}

/// 100,000 empty batches (6.1 MB): printing them used to take 677 MB.
#[test]
#[cfg(feature = "json")]
fn a_hundred_thousand_empty_batches_are_printed_in_bounded_memory() {
    let options = DecodeOptions::default();
    let blob = batch_with_records(0, &[]).repeat(100_000);
    assert_eq!(blob.len(), 6_100_000);
    let printed = streamed(&options, Some(1 << 20), "empty batches", || {
        print_records(&blob, &options)
    });
    assert_eq!(printed, Ok(()));
}
