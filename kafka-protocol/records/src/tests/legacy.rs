//! Magic 0 and 1 message sets.

use super::fixtures::*;
use super::*;

const T0: i64 = 1_700_000_000_000;

/// A legacy message entry written field by field, CRC-32 included.
pub(super) fn message(
    offset: i64,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    let mut body = vec![magic as u8, attributes as u8];
    if magic == 1 {
        body.extend_from_slice(&timestamp.to_be_bytes());
    }
    for field in [key, value] {
        match field {
            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(bytes) => {
                body.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                body.extend_from_slice(bytes);
            }
        }
    }
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// (offset, timestamp, key, value) of a message.
type Flat = (i64, Option<i64>, Option<Vec<u8>>, Option<Vec<u8>>);

/// Every message of every entry.
fn flatten(blob: &[u8]) -> Vec<Flat> {
    let set = RecordSet::parse(blob, &DecodeOptions::default()).unwrap();
    assert_eq!(set.partial_tail, None);
    let mut out = Vec::new();
    for batch in &set.batches {
        let Batch::Legacy(entry) = batch else {
            panic!("expected a legacy entry")
        };
        for message in entry.messages() {
            let m = message.unwrap();
            out.push((
                m.offset,
                m.timestamp,
                m.key.map(<[u8]>::to_vec),
                m.value.map(<[u8]>::to_vec),
            ));
        }
    }
    out
}

fn expected(offsets: [i64; 3], timestamps: bool) -> Vec<Flat> {
    (0..3)
        .map(|i| {
            let key = (i != 1).then(|| format!("k{i}").into_bytes());
            let value = format!("legacy value {i} ").repeat(6).into_bytes();
            let timestamp = timestamps.then_some(T0 + i as i64);
            (offsets[i], timestamp, key, Some(value))
        })
        .collect()
}

#[test]
fn hand_built_magic_0_and_1() {
    let mut blob = message(5, 0, 0, 0, Some(b"k"), Some(b"v"));
    blob.extend(message(6, 1, 0, T0, None, Some(b"w")));
    blob.extend(message(7, 1, 0x08, T0 + 1, Some(b""), None));
    let set = RecordSet::parse(&blob, &DecodeOptions::default()).unwrap();
    assert_eq!(set.batches.len(), 3);
    let Batch::Legacy(last) = &set.batches[2] else {
        panic!()
    };
    assert_eq!(
        last.message().timestamp_type(),
        Some(TimestampType::LogAppendTime)
    );
    assert_eq!(
        flatten(&blob),
        vec![
            (5, None, Some(b"k".to_vec()), Some(b"v".to_vec())),
            (6, Some(T0), None, Some(b"w".to_vec())),
            (7, Some(T0 + 1), Some(vec![]), None),
        ]
    );
    // The hand-built messages match what kafka-python writes.
    let mut python = Vec::new();
    for i in 0..3i64 {
        let key = (i != 1).then(|| format!("k{i}").into_bytes());
        let value = format!("legacy value {i} ").repeat(6).into_bytes();
        python.extend(message(i, 0, 0, 0, key.as_deref(), Some(&value)));
    }
    assert_eq!(python, hex(V0_NONE));
}

#[test]
fn kafka_python_message_sets() {
    assert_eq!(flatten(&hex(V0_NONE)), expected([0, 1, 2], false));
    assert_eq!(flatten(&hex(V1_NONE)), expected([0, 1, 2], true));
    // Magic 0 inner offsets are absolute; its LZ4 frame has Kafka 0.8's
    // broken header checksum.
    for (fixture, codec, offsets, timestamps) in [
        (V1_GZIP_WRAPPER, Compression::Gzip, [100, 101, 102], true),
        (
            V1_SNAPPY_WRAPPER,
            Compression::Snappy,
            [100, 101, 102],
            true,
        ),
        (V0_LZ4_OLD_KAFKA_WRAPPER, Compression::Lz4, [0, 1, 2], false),
    ] {
        let blob = hex(fixture);
        if codec.is_enabled() {
            assert_eq!(flatten(&blob), expected(offsets, timestamps), "{codec}");
        } else {
            let error = RecordSet::parse(&blob, &DecodeOptions::default()).unwrap_err();
            assert_eq!(error, RecordsError::CodecNotEnabled { codec });
        }
    }
}

#[cfg(feature = "gzip")]
fn gzip(data: &[u8]) -> Vec<u8> {
    compress(Compression::Gzip, data).unwrap()
}

#[cfg(feature = "gzip")]
#[test]
fn hand_built_gzip_wrapper() {
    // Relative inner offsets 0..=2; the broker stored 42 (the last absolute
    // offset) in the wrapper, which is LogAppendTime.
    let mut inner = Vec::new();
    for (i, value) in [&b"a"[..], b"bb", b"ccc"].into_iter().enumerate() {
        inner.extend(message(i as i64, 1, 0, T0 + i as i64, None, Some(value)));
    }
    let wrapper = message(42, 1, 0x08 | 1, T0 + 99, None, Some(&gzip(&inner)));
    let mut blob = wrapper.clone();
    blob.extend(message(43, 1, 0, T0, None, Some(b"after")));
    let messages = flatten(&blob);
    let offsets: Vec<_> = messages.iter().map(|m| m.0).collect();
    let timestamps: Vec<_> = messages.iter().map(|m| m.1).collect();
    assert_eq!(offsets, [40, 41, 42, 43]);
    assert_eq!(
        timestamps,
        [Some(T0 + 99), Some(T0 + 99), Some(T0 + 99), Some(T0)]
    );
    assert_eq!(messages[2].3.as_deref(), Some(&b"ccc"[..]));

    // A magic 0 wrapper keeps inner offsets as they are.
    let mut inner = Vec::new();
    for offset in [7, 8] {
        inner.extend(message(offset, 0, 0, 0, None, Some(b"x")));
    }
    let wrapper = message(8, 0, 1, 0, None, Some(&gzip(&inner)));
    let offsets: Vec<_> = flatten(&wrapper).iter().map(|m| m.0).collect();
    assert_eq!(offsets, [7, 8]);

    // JSON of a legacy entry.
    #[cfg(feature = "json")]
    {
        let json = records_to_json(&blob, &DecodeOptions::default()).unwrap();
        let entry = &json["batches"][0];
        assert_eq!(entry["offset"], 42);
        assert_eq!(entry["magic"], 1);
        assert_eq!(entry["compression"], "gzip");
        assert_eq!(entry["timestamp"], T0 + 99);
        assert_eq!(entry["records"][1]["offset"], 41);
        assert_eq!(entry["records"][1]["value"], "YmI=");
        assert_eq!(entry["records"][1]["valueUtf8"], "bb");
        assert_eq!(entry["records"][1]["key"], serde_json::Value::Null);
        assert_eq!(entry["records"][1]["headers"], serde_json::json!([]));
    }
}

#[cfg(feature = "gzip")]
#[test]
fn malformed_wrappers() {
    let options = DecodeOptions::default();
    let invalid = |blob: &[u8]| match LegacyEntry::decode(blob, &options) {
        Err(RecordsError::Invalid { reason, .. }) => reason,
        other => panic!("expected an invalid wrapper, got {other:?}"),
    };
    // Nested compression.
    let nested = message(
        0,
        1,
        1,
        0,
        None,
        Some(&gzip(&message(0, 1, 0, 0, None, Some(b"x")))),
    );
    let outer = message(0, 1, 1, 0, None, Some(&gzip(&nested)));
    assert_eq!(invalid(&outer), "inner message is compressed too");
    // Null value and empty message set.
    assert_eq!(invalid(&message(0, 1, 1, 0, None, None)), "value is null");
    assert_eq!(
        invalid(&message(0, 1, 1, 0, None, Some(&gzip(b"")))),
        "holds no messages"
    );
    // A truncated inner message is an error, not a partial tail.
    let inner = message(0, 1, 0, 0, None, Some(b"abc"));
    let cut = message(0, 1, 1, 0, None, Some(&gzip(&inner[..inner.len() - 1])));
    assert!(matches!(
        LegacyEntry::decode(&cut, &options),
        Err(RecordsError::Truncated { .. })
    ));
}

#[test]
fn legacy_errors() {
    let options = DecodeOptions::default();
    let good = message(0, 1, 0, T0, Some(b"key"), Some(b"value"));
    // CRC.
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert!(matches!(
        LegacyEntry::decode(&bad, &options),
        Err(RecordsError::CrcMismatch { offset: 0, .. })
    ));
    // Magic 3 in a legacy decoder.
    let mut bad = good.clone();
    bad[16] = 3;
    assert!(matches!(
        LegacyEntry::decode(&bad, &options),
        Err(RecordsError::BadMagic {
            offset: 16,
            magic: 3
        })
    ));
    // A key length past the message size, with a valid CRC.
    let mut bad = good.clone();
    bad[26..30].copy_from_slice(&100i32.to_be_bytes());
    let crc = crc32fast::hash(&bad[16..]);
    bad[12..16].copy_from_slice(&crc.to_be_bytes());
    assert!(matches!(
        LegacyEntry::decode(&bad, &options),
        Err(RecordsError::LengthMismatch { .. })
    ));
    // A negative length other than -1 is null, as Kafka reads it; the
    // bytes after it are then the value's length, past the message.
    bad[26..30].copy_from_slice(&(-2i32).to_be_bytes());
    let crc = crc32fast::hash(&bad[16..]);
    bad[12..16].copy_from_slice(&crc.to_be_bytes());
    assert!(!matches!(
        LegacyEntry::decode(&bad, &options),
        Err(RecordsError::NegativeLength { .. })
    ));
    // Unknown codec 6.
    let bad = message(0, 1, 6, 0, None, Some(b"x"));
    assert!(matches!(
        LegacyEntry::decode(&bad, &options),
        Err(RecordsError::UnknownCodec {
            codec: 6,
            offset: 17
        })
    ));
    // Trailing bytes inside the declared size.
    let mut bad = message(0, 0, 0, 0, None, Some(b"x"));
    bad.push(0);
    let size = (bad.len() - 12) as i32;
    bad[8..12].copy_from_slice(&size.to_be_bytes());
    let crc = crc32fast::hash(&bad[16..]);
    bad[12..16].copy_from_slice(&crc.to_be_bytes());
    assert!(matches!(
        LegacyEntry::decode(&bad, &options),
        Err(RecordsError::LengthMismatch { .. })
    ));
}

#[test]
fn zstd_is_refused_below_magic_2() {
    let codec = Compression::Zstd;
    for magic in [0, 1] {
        let inner = message(0, magic, 0, 0, None, Some(b"v"));
        let data = if codec.is_enabled() {
            compress(codec, &inner).unwrap()
        } else {
            inner.clone()
        };
        let wrapper = message(0, magic, 4, 0, None, Some(&data));
        let error = RecordsError::CodecNotAllowed {
            codec,
            magic,
            offset: 17,
        };
        assert_eq!(
            LegacyEntry::decode(&wrapper, &DecodeOptions::default()).map(drop),
            Err(error.clone())
        );
        assert_eq!(
            RecordSet::parse(&wrapper, &DecodeOptions::default()).map(drop),
            Err(error)
        );
    }
}
