//! Data that flows: kafka-wire creates topics and produces batches in every
//! codec (none, gzip, snappy, lz4, zstd) from a plain producer, an
//! idempotent one and a transactional one (InitProducerId,
//! AddPartitionsToTxn, EndTxn, one transaction committed and one aborted);
//! fetches them back at the newest Fetch version and at v4; the Java
//! consumer reads the committed ones. Then the Java producer writes batches
//! in every codec (idempotent, and transactional), which kafka-wire fetches
//! and decodes exactly.

use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::ApiKey;
use kafka_wire_records::{
    Batch, Batches, Compression, ControlRecordType, DecodeOptions, Header, RecordBatchBuilder,
};
use kafka_wire_test_support::kafka::Kafka;
use kafka_wire_tests::broker::Session;
use kafka_wire_tests::java::{jvm, read_lines};
use serde_json::{json, Value};

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// One record as both sides describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// A data batch as produced, to find again in the log.
#[derive(Debug, Clone)]
struct Produced {
    codec: Compression,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    committed: bool,
    records: Vec<Rec>,
}

/// What one batch of the log holds.
#[derive(Debug, Clone)]
struct Fetched {
    codec: Option<Compression>,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: Option<ControlRecordType>,
    records: Vec<Rec>,
}

/// What the data test counted, for its summary line.
#[derive(Debug, Default)]
pub struct Counts {
    /// The id of `kw-data`, where kafka-wire's batches are.
    pub topic_id: String,
    pub batches: usize,
    pub records: usize,
    pub java_read: usize,
    pub java_written: usize,
}

pub fn run(kafka: &Kafka) -> Counts {
    let mut session = Session::connect(kafka.bootstrap(), "kw-data");
    let topic_id = create_topic(&mut session, "kw-data");
    let java_topic_id = create_topic(&mut session, "java-data");
    let mut produced = Vec::new();

    // A plain producer: no producer id.
    let batch = build(Compression::Snappy, -1, -1, -1, false, "plain", 2);
    produced.push(produce(&mut session, "kw-data", &topic_id, None, batch));

    // An idempotent producer: one batch per codec, sequences running on.
    // Retried while the transaction coordinator loads (COORDINATOR_LOAD_IN_PROGRESS).
    let init = session.json_until(
        ApiKey::InitProducerId,
        &json!({"transactionalId": null, "transactionTimeoutMs": 60_000}),
        |answer| answer["errorCode"] == 0,
    );
    let (pid, epoch) = producer(&init);
    let mut sequence = 0;
    for codec in CODECS {
        let batch = build(codec, pid, epoch, sequence, false, "idempotent", 3);
        sequence += 3;
        produced.push(produce(&mut session, "kw-data", &topic_id, None, batch));
    }

    // A transactional producer: commit two batches, abort one.
    let txn = "kw-data-txn";
    let found = session.json_until(
        ApiKey::FindCoordinator,
        &json!({"key": txn, "keyType": 1, "coordinatorKeys": [txn]}),
        |answer| answer["coordinators"][0]["errorCode"] == 0,
    );
    assert_eq!(found["coordinators"][0]["nodeId"], 1, "{found}");
    let init = session.json_until(
        ApiKey::InitProducerId,
        &json!({"transactionalId": txn, "transactionTimeoutMs": 60_000}),
        |answer| answer["errorCode"] == 0,
    );
    let (pid, mut epoch) = producer(&init);
    let mut sequence = 0;
    for (codecs, commit) in [
        (&[Compression::Zstd, Compression::Gzip][..], true),
        (&[Compression::Lz4][..], false),
    ] {
        add_partition(&mut session, txn, pid, epoch, "kw-data");
        for &codec in codecs {
            let mut batch = build(codec, pid, epoch, sequence, true, "transactional", 2);
            batch.committed = commit;
            sequence += 2;
            produced.push(produce(
                &mut session,
                "kw-data",
                &topic_id,
                Some(txn),
                batch,
            ));
        }
        let ended = session.json_until(
            ApiKey::EndTxn,
            &json!({"transactionalId": txn, "producerId": pid, "producerEpoch": epoch, "committed": commit}),
            |answer| answer["errorCode"] != 51,
        );
        assert_eq!(ended["errorCode"], 0, "{ended}");
        // Transactions v2 (EndTxn v5) bump the epoch at each end, which
        // starts the sequences again.
        if let Some(next) = ended["producerEpoch"].as_i64().filter(|&e| e >= 0) {
            if next != i64::from(epoch) {
                epoch = i16::try_from(next).unwrap();
                sequence = 0;
            }
        }
    }
    let records: usize = produced.iter().map(|b| b.records.len()).sum();

    // Fetch it all back, at the newest version and at v4, read_committed.
    let newest = session.version(ApiKey::Fetch);
    let (blob, aborted) = fetch_all(&mut session, newest, "kw-data", &topic_id);
    let (blob_v4, aborted_v4) = fetch_all(&mut session, 4, "kw-data", &topic_id);
    assert_eq!(blob, blob_v4, "Fetch v{newest} and v4 return other bytes");
    assert_eq!(aborted, aborted_v4);
    let log = decode_log(&blob);
    check_log(&produced, &log, &aborted);

    // The Java consumer reads the committed records.
    let committed: Vec<Rec> = produced
        .iter()
        .filter(|b| b.committed)
        .flat_map(|b| b.records.clone())
        .collect();
    let mut counts = Counts {
        topic_id: topic_id.clone(),
        batches: produced.len(),
        records,
        ..Counts::default()
    };
    let Some(jvm) = jvm() else {
        return counts;
    };
    let dir = kafka.dir().join("java");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("consumed.jsonl");
    let count = committed.len().to_string();
    jvm.run_class(
        "dev.kafkawire.reference.ClientData",
        ["consume", kafka.bootstrap(), "kw-data", &count, &path(&out)],
    );
    let read: Vec<Rec> = read_lines(&out).iter().map(rec_from_java).collect();
    assert_eq!(read, committed, "the Java consumer read other records");
    counts.java_read = read.len();

    // kafka-wire fetches and decodes what the Java producer writes.
    let out = dir.join("produced.jsonl");
    jvm.run_class(
        "dev.kafkawire.reference.ClientData",
        ["produce", kafka.bootstrap(), "java-data", &path(&out)],
    );
    let written = read_lines(&out);
    let (blob, aborted) = fetch_all(&mut session, newest, "java-data", &java_topic_id);
    let (blob_v4, _) = fetch_all(&mut session, 4, "java-data", &java_topic_id);
    assert_eq!(blob, blob_v4, "Fetch v{newest} and v4 return other bytes");
    let log = decode_log(&blob);
    check_java_log(&written, &log, &aborted);
    counts.java_written = written.len();
    counts
}

fn path(path: &Path) -> String {
    path.display().to_string()
}

fn producer(init: &Value) -> (i64, i16) {
    let pid = init["producerId"].as_i64().unwrap();
    let epoch = i16::try_from(init["producerEpoch"].as_i64().unwrap()).unwrap();
    assert!(pid >= 0, "{init}");
    (pid, epoch)
}

/// Creates a one-partition topic and waits for its leader; its topic id.
pub fn create_topic(session: &mut Session, name: &str) -> String {
    let created = session.json(
        ApiKey::CreateTopics,
        &json!({"topics": [{"name": name, "numPartitions": 1, "replicationFactor": 1,
                            "assignments": [], "configs": []}],
                "timeoutMs": 30_000}),
    );
    assert_eq!(created["topics"][0]["errorCode"], 0, "{created}");
    let metadata = session.json_until(
        ApiKey::Metadata,
        &json!({"topics": [{"name": name, "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}]}),
        |answer| {
            let topic = &answer["topics"][0];
            topic["errorCode"] == 0 && topic["partitions"][0]["leaderId"] == 1
        },
    );
    metadata["topics"][0]["topicId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn add_partition(session: &mut Session, txn: &str, pid: i64, epoch: i16, topic: &str) {
    // Clients use v3 and below (v4 and up are the brokers' batched form).
    let version = session.version(ApiKey::AddPartitionsToTxn).min(3);
    let request = json!({
        "v3AndBelowTransactionalId": txn,
        "v3AndBelowProducerId": pid,
        "v3AndBelowProducerEpoch": epoch,
        "v3AndBelowTopics": [{"name": topic, "partitions": [0]}]
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let added = session.json_at(ApiKey::AddPartitionsToTxn, version, &request);
        let error =
            &added["resultsByTopicV3AndBelow"][0]["resultsByPartition"][0]["partitionErrorCode"];
        // CONCURRENT_TRANSACTIONS while the last one completes.
        if error == 51 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        }
        assert_eq!(error, 0, "{added}");
        return;
    }
}

/// A batch of `count` records from one producer.
fn build(
    codec: Compression,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    kind: &str,
    count: usize,
) -> Produced {
    let records = (0..count)
        .map(|i| Rec {
            offset: i as i64,
            timestamp: 1_700_000_000_000 + i as i64,
            key: (i != 1).then(|| format!("{kind}-{codec:?}-{i}").into_bytes()),
            value: Some(
                format!("kafka-wire {kind} {codec:?} record {i} ")
                    .repeat(8)
                    .into_bytes(),
            ),
            headers: vec![
                ("codec".into(), Some(format!("{codec:?}").into_bytes())),
                ("null".into(), None),
            ],
        })
        .collect();
    Produced {
        codec,
        producer_id,
        producer_epoch,
        base_sequence,
        transactional,
        committed: true,
        records,
    }
}

fn encode(batch: &Produced) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(0)
        .compression(batch.codec)
        .producer_id(batch.producer_id)
        .producer_epoch(batch.producer_epoch)
        .base_sequence(batch.base_sequence)
        .transactional(batch.transactional);
    for record in &batch.records {
        let headers: Vec<Header> = record
            .headers
            .iter()
            .map(|(k, v)| Header::new(k, v.as_deref()))
            .collect();
        builder
            .append(
                record.timestamp,
                record.key.as_deref(),
                record.value.as_deref(),
                &headers,
            )
            .unwrap();
    }
    builder.build().unwrap()
}

/// Produces one batch with acks=-1; the batch with the offsets the broker
/// gave its records.
fn produce(
    session: &mut Session,
    topic: &str,
    topic_id: &str,
    transactional_id: Option<&str>,
    mut batch: Produced,
) -> Produced {
    let answer = session.json(
        ApiKey::Produce,
        &json!({
            "transactionalId": transactional_id,
            "acks": -1,
            "timeoutMs": 30_000,
            "topicData": [{"name": topic, "topicId": topic_id, "partitionData": [
                {"index": 0, "records": STANDARD.encode(encode(&batch))}
            ]}]
        }),
    );
    let partition = &answer["responses"][0]["partitionResponses"][0];
    assert_eq!(partition["errorCode"], 0, "{answer}");
    let base = partition["baseOffset"].as_i64().unwrap();
    for record in &mut batch.records {
        record.offset += base;
    }
    batch
}

/// Fetches a partition from offset 0 to its last stable offset at
/// `version`, read_committed: the records blobs joined, and the aborted
/// transactions listed, as (producer id, first offset).
fn fetch_all(
    session: &mut Session,
    version: i16,
    topic: &str,
    topic_id: &str,
) -> (Vec<u8>, Vec<(i64, i64)>) {
    let mut blob = Vec::new();
    let mut aborted = Vec::new();
    let mut offset = 0i64;
    for _ in 0..100 {
        let answer = session.json_at(
            ApiKey::Fetch,
            version,
            &json!({
                "replicaId": -1,
                "maxWaitMs": 0,
                "minBytes": 0,
                "maxBytes": 8 << 20,
                "isolationLevel": 1,
                "topics": [{"topic": topic, "topicId": topic_id, "partitions": [{
                    "partition": 0,
                    "currentLeaderEpoch": -1,
                    "fetchOffset": offset,
                    "lastFetchedEpoch": -1,
                    "logStartOffset": -1,
                    "partitionMaxBytes": 8 << 20
                }]}],
                "forgottenTopicsData": [],
                "rackId": ""
            }),
        );
        let partition = &answer["responses"][0]["partitions"][0];
        assert_eq!(partition["errorCode"], 0, "Fetch v{version}: {answer}");
        for txn in partition["abortedTransactions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            aborted.push((
                txn["producerId"].as_i64().unwrap(),
                txn["firstOffset"].as_i64().unwrap(),
            ));
        }
        let stable = partition["lastStableOffset"].as_i64().unwrap();
        let records = partition["records"]
            .as_str()
            .map(|b| STANDARD.decode(b).unwrap())
            .unwrap_or_default();
        // Whole batches only: a fetch may end in part of one.
        let mut whole = 0;
        for batch in Batches::new(&records, &DecodeOptions::default()) {
            if let Batch::V2(batch) = batch.unwrap() {
                offset = batch.header().last_offset() + 1;
                whole += batch.header().batch_length as usize + 12;
            }
        }
        blob.extend_from_slice(&records[..whole]);
        if offset >= stable {
            aborted.sort_unstable();
            aborted.dedup();
            return (blob, aborted);
        }
    }
    panic!("Fetch v{version} of {topic}: the log does not end");
}

fn decode_log(blob: &[u8]) -> Vec<Fetched> {
    Batches::new(blob, &DecodeOptions::default())
        .map(|batch| match batch.unwrap() {
            Batch::V2(batch) => {
                let header = *batch.header();
                let records: Vec<_> = batch.records().map(Result::unwrap).collect();
                Fetched {
                    codec: header.compression(),
                    producer_id: header.producer_id,
                    producer_epoch: header.producer_epoch,
                    base_sequence: header.base_sequence,
                    transactional: header.is_transactional(),
                    control: records.first().and_then(|r| r.control).map(|c| c.kind()),
                    records: records
                        .iter()
                        .map(|r| Rec {
                            offset: r.offset,
                            timestamp: r.timestamp,
                            key: r.key.map(<[u8]>::to_vec),
                            value: r.value.map(<[u8]>::to_vec),
                            headers: r
                                .headers
                                .iter()
                                .map(|h| (h.key.to_owned(), h.value.map(<[u8]>::to_vec)))
                                .collect(),
                        })
                        .collect(),
                }
            }
            Batch::Legacy(_) => panic!("a legacy message in a 4.x log"),
        })
        .collect()
}

/// The log holds exactly the batches produced, in order, with a commit or
/// abort marker after each transaction, and the aborted one is listed.
fn check_log(produced: &[Produced], log: &[Fetched], aborted: &[(i64, i64)]) {
    let data: Vec<&Fetched> = log.iter().filter(|b| b.control.is_none()).collect();
    assert_eq!(data.len(), produced.len(), "{log:#?}");
    for (ours, theirs) in produced.iter().zip(&data) {
        assert_eq!(theirs.codec, Some(ours.codec));
        assert_eq!(theirs.producer_id, ours.producer_id);
        assert_eq!(theirs.producer_epoch, ours.producer_epoch);
        assert_eq!(theirs.base_sequence, ours.base_sequence);
        assert_eq!(theirs.transactional, ours.transactional);
        assert_eq!(theirs.records, ours.records);
    }
    let markers: Vec<ControlRecordType> = log.iter().filter_map(|b| b.control).collect();
    assert_eq!(
        markers,
        [ControlRecordType::Commit, ControlRecordType::Abort],
        "{log:#?}"
    );
    let aborted_batch = produced.iter().find(|b| !b.committed).unwrap();
    assert_eq!(
        aborted,
        [(aborted_batch.producer_id, aborted_batch.records[0].offset)]
    );
}

fn bytes(value: &Value) -> Option<Vec<u8>> {
    value.as_str().map(|b| STANDARD.decode(b).unwrap())
}

fn rec_from_java(line: &Value) -> Rec {
    Rec {
        offset: line["offset"].as_i64().unwrap(),
        timestamp: line["timestamp"].as_i64().unwrap(),
        key: bytes(&line["key"]),
        value: bytes(&line["value"]),
        headers: line["headers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["key"].as_str().unwrap().to_owned(), bytes(&h["value"])))
            .collect(),
    }
}

/// Every record the Java producer sent is in the log, exactly, in a batch
/// of the codec it was configured with; its idempotent batches carry a
/// producer id, its transactional ones the flag, and its aborted one is
/// listed and followed by an abort marker.
fn check_java_log(written: &[Value], log: &[Fetched], aborted: &[(i64, i64)]) {
    for line in written {
        let ours = rec_from_java(line);
        let batch = log
            .iter()
            .find(|b| b.records.iter().any(|r| r.offset == ours.offset))
            .unwrap_or_else(|| panic!("offset {} is not in the log", ours.offset));
        let theirs = batch
            .records
            .iter()
            .find(|r| r.offset == ours.offset)
            .unwrap();
        assert_eq!(theirs, &ours);
        let codec = match line["codec"].as_str().unwrap() {
            "none" => Compression::None,
            "gzip" => Compression::Gzip,
            "snappy" => Compression::Snappy,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::Zstd,
            other => panic!("codec {other}"),
        };
        assert_eq!(batch.codec, Some(codec), "{line}");
        assert!(
            batch.producer_id >= 0 && batch.base_sequence >= 0,
            "{batch:?}"
        );
        let committed = line["committed"].as_bool().unwrap();
        if !committed {
            assert!(batch.transactional);
            assert!(aborted.contains(&(batch.producer_id, batch.records[0].offset)));
        }
    }
    let markers: Vec<ControlRecordType> = log.iter().filter_map(|b| b.control).collect();
    assert_eq!(
        markers,
        [ControlRecordType::Commit, ControlRecordType::Abort],
        "{log:#?}"
    );
}
