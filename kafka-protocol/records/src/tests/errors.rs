//! Typed errors, truncation and corruption.

use super::*;

fn decode(batch: &[u8]) -> Result<Vec<OwnedRecord>, RecordsError> {
    let (batch, _) = RecordBatch::decode(batch, &DecodeOptions::default())?;
    batch
        .records()
        .map(|record| record.map(|r| OwnedRecord::from(&r)))
        .collect()
}

fn sample_batch(codec: Compression) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(10).compression(codec);
    for i in 0..3u8 {
        builder
            .append(
                i64::from(i),
                Some(&[i]),
                Some(b"some value"),
                &[Header::new("h", Some(&[i]))],
            )
            .unwrap();
    }
    builder.build().unwrap()
}

#[test]
fn crc_mismatch() {
    let mut batch = sample_batch(Compression::None);
    let stored = u32::from_be_bytes(batch[17..21].try_into().unwrap());
    *batch.last_mut().unwrap() ^= 0x01;
    let computed = crc32c::crc32c(&batch[21..]);
    assert_eq!(
        decode(&batch),
        Err(RecordsError::CrcMismatch {
            offset: 0,
            expected: stored,
            computed
        })
    );

    // In a blob, the offset is that of the broken batch.
    let mut blob = sample_batch(Compression::None);
    let first = blob.len();
    blob.extend_from_slice(&batch);
    let error = RecordSet::parse(&blob, &DecodeOptions::default()).unwrap_err();
    assert!(matches!(error, RecordsError::CrcMismatch { offset, .. } if offset == first));
}

#[test]
fn bad_magic() {
    let mut batch = sample_batch(Compression::None);
    batch[16] = 3;
    assert_eq!(
        decode(&batch),
        Err(RecordsError::BadMagic {
            offset: 16,
            magic: 3
        })
    );
    assert_eq!(
        RecordSet::parse(&batch, &DecodeOptions::default()),
        Err(RecordsError::BadMagic {
            offset: 16,
            magic: 3
        })
    );
    batch[16] = 0xff;
    assert_eq!(
        RecordSet::parse(&batch, &DecodeOptions::default()),
        Err(RecordsError::BadMagic {
            offset: 16,
            magic: -1
        })
    );
    // A v2 decoder given a legacy message.
    batch[16] = 1;
    assert_eq!(
        decode(&batch),
        Err(RecordsError::BadMagic {
            offset: 16,
            magic: 1
        })
    );
}

#[test]
fn truncation_at_every_byte_is_a_partial_tail() {
    let codec = *enabled_codecs().last().unwrap();
    let first = sample_batch(codec);
    let mut blob = first.clone();
    blob.extend_from_slice(&sample_batch(Compression::None));
    for cut in 0..=blob.len() {
        let set = RecordSet::parse(&blob[..cut], &DecodeOptions::default()).unwrap();
        let complete = if cut >= blob.len() {
            2
        } else if cut >= first.len() {
            1
        } else {
            0
        };
        let consumed = [0, first.len(), blob.len()][complete];
        assert_eq!(set.batches.len(), complete, "cut at {cut}");
        let tail = (cut > consumed).then_some(cut - consumed);
        assert_eq!(set.partial_tail, tail, "cut at {cut}");
        set.validate().unwrap();
    }
    // Decoding one batch directly, a cut is a typed truncation error.
    for cut in 0..first.len() {
        let error = RecordBatch::decode(&first[..cut], &DecodeOptions::default()).unwrap_err();
        assert!(
            matches!(error, RecordsError::Truncated { .. }),
            "cut at {cut}: {error:?}"
        );
    }
}

#[test]
fn corruption_at_every_byte_never_panics() {
    for codec in enabled_codecs() {
        let batch = sample_batch(codec);
        for index in 0..batch.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut broken = batch.clone();
                broken[index] ^= flip;
                exercise(&broken);
                // Also past the CRC check, so every field reaches the parser.
                if index >= 21 && broken.len() >= 61 {
                    refresh_crc(&mut broken);
                    exercise(&broken);
                }
            }
        }
    }
}

/// Runs every decoding path over `blob`; only panics would fail.
fn exercise(blob: &[u8]) {
    let options = DecodeOptions::default().with_max_decompressed_size(1 << 20);
    #[cfg(feature = "json")]
    let _ = records_to_json(blob, &options);
    if let Ok(set) = RecordSet::parse(blob, &options) {
        let _ = set.validate();
    }
}

#[test]
fn batch_length_disagreeing_with_content() {
    let mut batch = sample_batch(Compression::None);
    // Shorter than a v2 header.
    batch[8..12].copy_from_slice(&48i32.to_be_bytes());
    assert!(matches!(
        decode(&batch),
        Err(RecordsError::Invalid {
            context: "record batch",
            ..
        })
    ));
    // Below the smallest legacy message: an error in a blob, not a tail.
    batch[8..12].copy_from_slice(&13i32.to_be_bytes());
    assert!(matches!(
        RecordSet::parse(&batch, &DecodeOptions::default()),
        Err(RecordsError::Invalid {
            context: "batch",
            ..
        })
    ));
    // Longer than the input: truncated alone, a partial tail in a blob.
    let len = batch.len() as i32 - 12 + 1;
    batch[8..12].copy_from_slice(&len.to_be_bytes());
    assert!(matches!(
        decode(&batch),
        Err(RecordsError::Truncated { .. })
    ));
    let set = RecordSet::parse(&batch, &DecodeOptions::default()).unwrap();
    assert_eq!(
        (set.batches.len(), set.partial_tail),
        (0, Some(batch.len()))
    );
}

/// A record with a null key and value "abcdefgh" (15 bytes): length 14
/// (zigzag 0x1c), attributes, timestamp and offset deltas 0, key -1 (0x01),
/// value length 8 (0x10), the value, no headers.
const RECORD_15: &str = "1c 00 00 00 01 10 6162636465666768 00";

#[test]
fn record_length_disagreeing_with_content() {
    // Declared 15 bytes of body, content takes 14.
    let long = hex("1e 00 00 00 01 10 6162636465666768 00 00");
    assert_eq!(
        decode(&raw_batch(0, 1, &long)),
        Err(RecordsError::LengthMismatch {
            context: "record",
            offset: 61,
            declared: 15,
            actual: 14
        })
    );
    // Declared 13, content needs 14.
    let short = hex("1a 00 00 00 01 10 6162636465666768 00");
    assert!(matches!(
        decode(&raw_batch(0, 1, &short)),
        Err(RecordsError::LengthMismatch {
            context: "record",
            declared: 13,
            ..
        })
    ));
    // Declared past the end of the section.
    let past = hex("7e 00 00 00 01 10 6162636465666768 00");
    assert!(matches!(
        decode(&raw_batch(0, 1, &past)),
        Err(RecordsError::Truncated { .. })
    ));
    // Negative record length.
    let negative = hex("03 00 00 00 01 10 6162636465666768 00");
    assert!(matches!(
        decode(&raw_batch(0, 1, &negative)),
        Err(RecordsError::NegativeLength {
            context: "record length",
            length: -2,
            ..
        })
    ));
}

#[test]
fn unknown_codecs() {
    for codec in 5..=7u8 {
        let batch = raw_batch(i16::from(codec), 1, &hex(RECORD_15));
        assert_eq!(
            decode(&batch),
            Err(RecordsError::UnknownCodec { offset: 21, codec })
        );
    }
}

#[test]
fn record_count_disagreeing_with_content() {
    let record = hex(RECORD_15);
    assert_eq!(decode(&raw_batch(0, 1, &record)).unwrap().len(), 1);
    assert_eq!(
        decode(&raw_batch(0, 2, &record)),
        Err(RecordsError::RecordCountMismatch {
            offset: 61 + 15,
            declared: 2,
            found: 1,
            trailing_bytes: false
        })
    );
    assert_eq!(
        decode(&raw_batch(0, 0, &record)),
        Err(RecordsError::RecordCountMismatch {
            offset: 61,
            declared: 0,
            found: 0,
            trailing_bytes: true
        })
    );
    // Counts no content could hold are rejected before iterating.
    for count in [3, -1, i32::MAX] {
        assert_eq!(
            decode(&raw_batch(0, count, &record)),
            Err(RecordsError::InvalidRecordCount { offset: 57, count })
        );
    }
}

#[test]
fn over_long_varints() {
    // Record length in 6 bytes.
    let record = hex("ff ff ff ff ff 01 00 00 00 01 01 00 00 00");
    assert_eq!(
        decode(&raw_batch(0, 1, &record)),
        Err(RecordsError::VarintTooLong { offset: 61 })
    );
    // Timestamp delta in 11 bytes (record length 16).
    let record = hex("20 00 ffffffffffffffffffff01 00 01 01 00");
    assert_eq!(
        decode(&raw_batch(0, 1, &record)),
        Err(RecordsError::VarintTooLong { offset: 63 })
    );
}

#[test]
fn negative_lengths() {
    // Key length -2 and value length -3: null, as Kafka reads them.
    let record = hex("0c 00 00 00 03 05 00");
    let records = decode(&raw_batch(0, 1, &record)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(records.len(), 1);
    assert_eq!((&records[0].key, &records[0].value), (&None, &None));
    // Header count -1.
    let record = hex("0c 00 00 00 01 01 01");
    assert!(matches!(
        decode(&raw_batch(0, 1, &record)),
        Err(RecordsError::NegativeLength {
            context: "header count",
            length: -1,
            ..
        })
    ));
    // A null header key (-1, then -2), which Kafka refuses.
    for key_len in ["01", "03"] {
        let record = hex(&format!("10 00 00 00 01 01 02 {key_len} 01"));
        let expected = if key_len == "01" { -1 } else { -2 };
        assert!(matches!(
            decode(&raw_batch(0, 1, &record)),
            Err(RecordsError::NegativeLength {
                context: "header key length",
                length,
                ..
            }) if length == expected
        ));
    }
}

#[test]
fn invalid_utf8_header_key() {
    // One header: key [0xff], value null.
    let record = hex("12 00 00 00 01 01 02 02 ff 01");
    assert_eq!(
        decode(&raw_batch(0, 1, &record)),
        Err(RecordsError::InvalidHeaderKey { offset: 68 })
    );
}

#[cfg(feature = "gzip")]
#[test]
fn gzip_bomb_hits_the_limit() {
    // 100 gzip members of 1 MiB of zeros each: 100 MiB once decompressed,
    // about 100 KiB compressed.
    let member = compress(Compression::Gzip, &vec![0u8; 1 << 20]).unwrap();
    let bomb = member.repeat(100);
    let batch = raw_batch(1, 1, &bomb);
    let options = DecodeOptions::default().with_max_decompressed_size(1 << 20);
    assert_eq!(
        RecordBatch::decode(&batch, &options).unwrap_err(),
        RecordsError::DecompressedSizeExceeded {
            codec: Compression::Gzip,
            offset: 61,
            limit: 1 << 20
        }
    );
    // Within a larger limit the same bytes decompress.
    assert_eq!(
        decompress(Compression::Gzip, &member, 1 << 20)
            .unwrap()
            .len(),
        1 << 20
    );
    // And corrupt gzip is a decompression error.
    let batch = raw_batch(1, 1, b"not gzip at all");
    assert!(matches!(
        decode(&batch),
        Err(RecordsError::DecompressionFailed {
            codec: Compression::Gzip,
            ..
        })
    ));
}

#[test]
fn every_codec_enforces_the_limit() {
    let data = vec![7u8; 300_000];
    for codec in enabled_codecs() {
        let compressed = compress(codec, &data).unwrap();
        assert_eq!(
            decompress(codec, &compressed, data.len()).unwrap(),
            data,
            "{codec}"
        );
        assert!(
            matches!(
                decompress(codec, &compressed, data.len() - 1),
                Err(RecordsError::DecompressedSizeExceeded { .. })
            ),
            "{codec}"
        );
    }
}
