//! Builder then decoder.

use super::*;

fn sample_records() -> Vec<OwnedRecord> {
    let t0 = 1_600_000_000_000;
    vec![
        OwnedRecord {
            offset: 100,
            timestamp: t0,
            key: Some(b"key".to_vec()),
            value: Some(b"value".repeat(50)),
            headers: vec![
                ("trace".into(), Some(b"abc".to_vec())),
                ("empty".into(), None),
            ],
        },
        OwnedRecord {
            offset: 101,
            timestamp: t0 - 3, // earlier than the base: negative delta
            key: None,
            value: None,
            headers: vec![],
        },
        OwnedRecord {
            offset: 102,
            timestamp: t0 + 1_000_000,
            key: Some(vec![]),
            value: Some(vec![0xff, 0x00, 0xfe]),
            headers: vec![("ünïcode".into(), Some(vec![]))],
        },
    ]
}

#[test]
fn every_codec_round_trips() {
    for codec in enabled_codecs() {
        let mut builder = RecordBatchBuilder::new(100)
            .compression(codec)
            .partition_leader_epoch(9)
            .producer_id(77)
            .producer_epoch(2)
            .base_sequence(10);
        append_all(&mut builder, &sample_records());
        let bytes = builder.build().unwrap();
        let batch = only_batch(&bytes);
        let header = batch.header();
        assert_eq!(batch.compression(), codec);
        assert_eq!(header.compression(), Some(codec));
        assert_eq!(batch.is_borrowed(), codec == Compression::None);
        assert_eq!(header.batch_length as usize, bytes.len() - 12);
        assert_eq!(
            (
                header.base_offset,
                header.last_offset_delta,
                header.last_offset()
            ),
            (100, 2, 102)
        );
        assert_eq!(header.base_timestamp, 1_600_000_000_000);
        assert_eq!(header.max_timestamp, 1_600_000_000_000 + 1_000_000);
        assert_eq!((header.partition_leader_epoch, header.producer_id), (9, 77));
        assert_eq!((header.producer_epoch, header.base_sequence), (2, 10));
        assert_eq!(header.timestamp_type(), TimestampType::CreateTime);
        assert_eq!(owned_records(&batch), sample_records(), "{codec}");
    }
}

#[test]
fn disabled_codecs_are_typed_errors() {
    for codec in Compression::ALL.into_iter().filter(|c| !c.is_enabled()) {
        let builder = RecordBatchBuilder::new(0).compression(codec);
        assert_eq!(
            builder.build(),
            Err(RecordsError::CodecNotEnabled { codec })
        );
        // A batch claiming the codec, built around an arbitrary section.
        let batch = raw_batch(i16::from(codec.id()), 0, b"whatever");
        assert_eq!(
            RecordBatch::decode(&batch, &DecodeOptions::default()).unwrap_err(),
            RecordsError::CodecNotEnabled { codec }
        );
    }
}

#[test]
fn write_to_bytes_mut_and_several_batches() {
    let mut blob = bytes::BytesMut::new();
    for (i, codec) in enabled_codecs().into_iter().enumerate() {
        let mut builder = RecordBatchBuilder::new(10 * i as i64).compression(codec);
        builder
            .append(1, Some(codec.name().as_bytes()), None, &[])
            .unwrap();
        builder.write_to(&mut blob).unwrap();
    }
    let set = RecordSet::parse(&blob, &DecodeOptions::default()).unwrap();
    assert_eq!(set.batches.len(), enabled_codecs().len());
    set.validate().unwrap();
    for (i, batch) in set.batches.iter().enumerate() {
        let Batch::V2(batch) = batch else { panic!() };
        let record = batch.records().next().unwrap().unwrap();
        assert_eq!(record.offset, 10 * i as i64);
        assert_eq!(record.key, Some(enabled_codecs()[i].name().as_bytes()));
    }
}

#[test]
fn control_batch() {
    let mut builder = RecordBatchBuilder::new(500)
        .producer_id(4)
        .producer_epoch(1)
        .transactional(true);
    // A COMMIT marker: value is version 0 and coordinator epoch 3.
    builder
        .append_control(
            7,
            ControlRecord::new(ControlRecordType::Commit),
            Some(&[0, 0, 0, 0, 0, 3]),
        )
        .unwrap();
    builder
        .append_control(
            8,
            ControlRecord {
                version: 0,
                record_type: 42,
            },
            None,
        )
        .unwrap();
    let bytes = builder.build().unwrap();
    let batch = only_batch(&bytes);
    assert!(batch.header().is_control() && batch.header().is_transactional());
    let records: Vec<_> = batch.records().collect::<Result<_, _>>().unwrap();
    let commit = records[0].control.unwrap();
    assert_eq!(
        (commit.version, commit.kind()),
        (0, ControlRecordType::Commit)
    );
    assert_eq!(records[0].value, Some(&[0, 0, 0, 0, 0, 3][..]));
    assert_eq!(
        records[1].control.unwrap().kind(),
        ControlRecordType::Unknown(42)
    );
    assert_eq!(ControlRecordType::from_raw(0), ControlRecordType::Abort);

    #[cfg(feature = "json")]
    {
        let json = records_to_json(&bytes, &DecodeOptions::default()).unwrap();
        assert_eq!(json["batches"][0]["isControl"], true);
        assert_eq!(
            json["batches"][0]["records"][0]["control"],
            serde_json::json!({"version": 0, "type": 1})
        );
    }

    // A control batch whose record key is too short is an error.
    let mut builder = RecordBatchBuilder::new(0).control(true);
    builder.append(0, Some(b"ab"), None, &[]).unwrap();
    let bytes = builder.build().unwrap();
    let (batch, _) = RecordBatch::decode(&bytes, &DecodeOptions::default()).unwrap();
    let error = batch.records().next().unwrap().unwrap_err();
    assert!(matches!(
        error,
        RecordsError::Invalid {
            context: "control record",
            ..
        }
    ));
    // Walking a blob decodes every record before handing a batch over.
    assert_eq!(
        RecordSet::parse(&bytes, &DecodeOptions::default()).map(drop),
        Err(error)
    );
}

#[test]
fn log_append_time_and_empty_batches() {
    let mut builder = RecordBatchBuilder::new(0).log_append_time(9_999);
    builder.append(1, None, Some(b"a"), &[]).unwrap();
    builder.append(2, None, Some(b"b"), &[]).unwrap();
    let bytes = builder.build().unwrap();
    let batch = only_batch(&bytes);
    assert_eq!(
        batch.header().timestamp_type(),
        TimestampType::LogAppendTime
    );
    assert_eq!(batch.header().max_timestamp, 9_999);
    let records: Vec<_> = batch.records().collect::<Result<_, _>>().unwrap();
    // As in the Java client, records of a LogAppendTime batch report the
    // batch's max timestamp; the stored delta is kept.
    assert_eq!(
        (records[1].timestamp, records[1].timestamp_delta),
        (9_999, 1)
    );

    let empty = RecordBatchBuilder::new(5).build().unwrap();
    assert_eq!(empty.len(), RECORD_BATCH_OVERHEAD);
    let batch = only_batch(&empty);
    assert_eq!(batch.header().record_count, 0);
    assert_eq!(batch.header().last_offset_delta, -1);
    assert_eq!(
        (batch.header().base_timestamp, batch.header().max_timestamp),
        (-1, -1)
    );
    assert_eq!(batch.records().count(), 0);
}

#[cfg(feature = "json")]
#[test]
fn json_shape_of_a_v2_batch() {
    let mut builder = RecordBatchBuilder::new(3).partition_leader_epoch(1);
    builder
        .append(
            1000,
            Some(b"k"),
            Some(&[0xff]),
            &[Header::new("h", Some(b"hv")), Header::new("n", None)],
        )
        .unwrap();
    let mut blob = builder.build().unwrap();
    let full = blob.len();
    blob.extend_from_slice(&blob.clone()[..20]); // a partial second batch
    let json = records_to_json(&blob, &DecodeOptions::default()).unwrap();
    assert_eq!(json["partialTail"], 20);
    let batch = &json["batches"][0];
    let expected = serde_json::json!({
        "baseOffset": 3,
        "batchLength": full - 12,
        "partitionLeaderEpoch": 1,
        "magic": 2,
        "crc": batch["crc"].clone(),
        "attributes": 0,
        "compression": "none",
        "timestampType": "CreateTime",
        "isTransactional": false,
        "isControl": false,
        "lastOffsetDelta": 0,
        "baseTimestamp": 1000,
        "maxTimestamp": 1000,
        "producerId": -1,
        "producerEpoch": -1,
        "baseSequence": -1,
        "records": [{
            "offset": 3,
            "timestamp": 1000,
            "key": "aw==",
            "keyUtf8": "k",
            "value": "/w==",
            "headers": [{"key": "h", "value": "aHY="}, {"key": "n", "value": null}],
        }],
    });
    assert_eq!(batch, &expected);
    assert!(batch["crc"].is_u64());
    let whole = records_to_json(&blob[..full], &DecodeOptions::default()).unwrap();
    assert_eq!(whole["partialTail"], serde_json::Value::Null);
}

#[cfg(feature = "gzip")]
#[test]
fn mixed_magic_blob() {
    let mut blob = Vec::new();
    // A magic 1 message written by hand (CRC-32 over magic..end).
    let body = [
        &[1u8, 0][..],
        &5i64.to_be_bytes(),
        &(-1i32).to_be_bytes(),
        &1i32.to_be_bytes(),
        b"L",
    ]
    .concat();
    blob.extend_from_slice(&7i64.to_be_bytes());
    blob.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    blob.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    blob.extend_from_slice(&body);
    let mut builder = RecordBatchBuilder::new(8).compression(Compression::Gzip);
    builder.append(6, None, Some(b"V"), &[]).unwrap();
    builder.write_to(&mut blob).unwrap();

    let magics: Vec<_> = Batches::new(&blob, &DecodeOptions::default())
        .map(|batch| batch.unwrap().magic())
        .collect();
    assert_eq!(magics, [1, 2]);
    #[cfg(feature = "json")]
    {
        let json = records_to_json(&blob, &DecodeOptions::default()).unwrap();
        assert_eq!(json["batches"][0]["records"][0]["valueUtf8"], "L");
        assert_eq!(json["batches"][0]["timestamp"], 5);
        assert_eq!(json["batches"][1]["compression"], "gzip");
        assert_eq!(json["batches"][1]["records"][0]["offset"], 8);
    }
}
