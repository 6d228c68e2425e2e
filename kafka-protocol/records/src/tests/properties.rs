//! Property tests: round trips through the builder and decoding arbitrary
//! bytes without panicking.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

fn bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
    proptest::option::of(vec(any::<u8>(), 0..40))
}

/// Timestamp, key, value and headers of a record.
type RecordParts = (
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

fn record() -> impl Strategy<Value = RecordParts> {
    let timestamp = prop_oneof![any::<i64>(), 1_500_000_000_000i64..1_800_000_000_000];
    let headers = vec((".{0,12}", bytes()), 0..4);
    (timestamp, bytes(), bytes(), headers)
}

fn codec() -> impl Strategy<Value = Compression> {
    proptest::sample::select(enabled_codecs())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn builder_then_decoder_round_trips(
        base_offset in any::<i64>(),
        codec in codec(),
        records in vec(record(), 0..12),
        transactional in any::<bool>(),
    ) {
        let expected: Vec<OwnedRecord> = records
            .into_iter()
            .enumerate()
            .map(|(i, (timestamp, key, value, headers))| OwnedRecord {
                offset: base_offset.wrapping_add(i as i64),
                timestamp,
                key,
                value,
                headers,
            })
            .collect();
        let mut builder = RecordBatchBuilder::new(base_offset)
            .compression(codec)
            .transactional(transactional);
        append_all(&mut builder, &expected);
        let bytes = builder.build().unwrap();

        let batch = only_batch(&bytes);
        let header = batch.header();
        prop_assert_eq!(header.record_count as usize, expected.len());
        prop_assert_eq!(header.is_transactional(), transactional);
        prop_assert_eq!(header.last_offset_delta, expected.len() as i32 - 1);
        let first = expected.first().map_or(-1, |r| r.timestamp);
        let max = expected.iter().map(|r| r.timestamp).max().unwrap_or(-1);
        prop_assert_eq!((header.base_timestamp, header.max_timestamp), (first, max));
        prop_assert_eq!(owned_records(&batch), expected);
        #[cfg(feature = "json")]
        prop_assert!(records_to_json(&bytes, &DecodeOptions::default()).is_ok());
    }

    #[test]
    fn arbitrary_bytes_never_panic(blob in vec(any::<u8>(), 0..200)) {
        #[cfg(feature = "json")]
        let _ = records_to_json(&blob, &DecodeOptions::default());
        let _ = RecordBatch::decode(&blob, &DecodeOptions::default());
        let _ = LegacyEntry::decode(&blob, &DecodeOptions::default());
    }

    #[test]
    fn arbitrary_records_sections_never_panic(
        attributes in 0i16..0x80,
        count in prop_oneof![0i32..6, any::<i32>()],
        section in vec(any::<u8>(), 0..120),
    ) {
        // A valid header and CRC around random content reaches every record
        // decoding path.
        let batch = raw_batch(attributes, count, &section);
        if let Ok(set) = RecordSet::parse(&batch, &DecodeOptions::default()) {
            let _ = set.validate();
            #[cfg(feature = "json")]
            let _ = set.to_json();
        }
    }
}
