//! Frames captured from real clients (kcat, kafka-python, confluent-kafka,
//! kafkajs) talking to the `mini_broker` example (since retired; today
//! `fake_interop.rs` records them from the fake when
//! `KAFKA_WIRE_UPDATE_CLIENT_FIXTURES` is set) into `fixtures/clients/<client>/`:
//!
//! - every request decodes and re-encodes to the same bytes, and so does
//!   every response, decoded with the api and version of the request whose
//!   correlation id it carries on the same connection;
//! - the record batches of the Produce requests decode to exactly the
//!   messages the producer was given (`messages.json`: keys, values,
//!   headers and creation timestamps, in order), in CreateTime batches with
//!   the compression attribute of the codec it was asked to use, and from an
//!   idempotent producer (producer id set). kcat cannot set a timestamp
//!   (`"timestamp": null`): its records need a plausible CreateTime, positive
//!   and within the batch's base..max timestamps;
//! - the records of every Fetch response decode.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use kafka_wire_records::{Batch, Compression, DecodeOptions, RecordSet, TimestampType};
use kafka_wire_tests::workspace_root;
use serde_json::Value;

/// One captured frame.
struct Frame {
    seq: u64,
    connection: u64,
    request: bool,
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    bytes: Vec<u8>,
}

/// A message's key, value and headers.
type Message = (Vec<u8>, Vec<u8>, Vec<(String, Vec<u8>)>);

/// A message as the producer was given it, with its creation timestamp in
/// ms (`None`: the producer could not set one).
type GivenMessage = (Message, Option<i64>);

/// A captured record: its message, absolute timestamp, and the base and max
/// timestamps of its batch.
type CapturedRecord = (Message, i64, (i64, i64));

fn client_dirs() -> Vec<PathBuf> {
    let root = workspace_root().join("fixtures/clients");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn load_frames(dir: &Path) -> Vec<Frame> {
    let path = dir.join("frames.jsonl");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let int = |line: &Value, key: &str| {
        line[key]
            .as_i64()
            .unwrap_or_else(|| panic!("{}: no {key} in {line}", path.display()))
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let line: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Frame {
                seq: int(&line, "seq") as u64,
                connection: int(&line, "connection") as u64,
                request: line["direction"] == "request",
                api_key: int(&line, "api_key") as i16,
                api_version: int(&line, "api_version") as i16,
                correlation_id: int(&line, "correlation_id") as i32,
                bytes: hex::decode(line["hex"].as_str().unwrap_or_default())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            }
        })
        .collect()
}

/// Topic -> (codec, messages), from `messages.json`.
fn load_messages(dir: &Path) -> HashMap<String, (Compression, Vec<GivenMessage>)> {
    let path = dir.join("messages.json");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text_of = |v: &Value| v.as_str().unwrap_or_default().as_bytes().to_vec();
    let mut topics = HashMap::new();
    for topic in spec["topics"].as_array().into_iter().flatten() {
        let codec = match topic["codec"].as_str() {
            Some("none") => Compression::None,
            Some("gzip") => Compression::Gzip,
            Some("snappy") => Compression::Snappy,
            Some("lz4") => Compression::Lz4,
            Some("zstd") => Compression::Zstd,
            other => panic!("{}: unknown codec {other:?}", path.display()),
        };
        let messages = topic["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                let headers = m["headers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|h| (h[0].as_str().unwrap_or_default().to_owned(), text_of(&h[1])))
                    .collect();
                let timestamp = match &m["timestamp"] {
                    Value::Null => None,
                    t => Some(t.as_i64().unwrap_or_else(|| {
                        panic!("{}: timestamp {t} is not an integer", path.display())
                    })),
                };
                (
                    (text_of(&m["key"]), text_of(&m["value"]), headers),
                    timestamp,
                )
            })
            .collect();
        let name = topic["topic"].as_str().unwrap_or_default().to_owned();
        topics.insert(name, (codec, messages));
    }
    topics
}

fn api(frame: &Frame, client: &str) -> ApiKey {
    ApiKey::from_key(frame.api_key)
        .unwrap_or_else(|| panic!("{client} #{}: unknown api key {}", frame.seq, frame.api_key))
}

#[test]
fn captured_frames_round_trip() {
    let dirs = client_dirs();
    assert!(
        dirs.len() >= 4,
        "expected four client captures, found {dirs:?}"
    );
    for dir in dirs {
        let client = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let frames = load_frames(&dir);
        let mut requests: HashMap<(u64, i32), (ApiKey, i16)> = HashMap::new();
        let (mut request_count, mut response_count) = (0, 0);
        for frame in &frames {
            let at = format!(
                "{client} #{} ({:?} v{})",
                frame.seq,
                api(frame, &client),
                frame.api_version
            );
            let mut again = Vec::new();
            if frame.request {
                let decoded = RequestFrame::decode(&frame.bytes)
                    .unwrap_or_else(|e| panic!("{at}: request does not decode: {e}"));
                assert_eq!(decoded.header.correlation_id, frame.correlation_id, "{at}");
                decoded
                    .encode(&mut again)
                    .unwrap_or_else(|e| panic!("{at}: request does not encode: {e}"));
                assert_eq!(
                    decoded.encoded_len(),
                    frame.bytes.len(),
                    "{at}: encoded_len"
                );
                requests.insert(
                    (frame.connection, frame.correlation_id),
                    (decoded.api_key(), decoded.api_version()),
                );
                request_count += 1;
            } else {
                let &(api, request_version) = requests
                    .get(&(frame.connection, frame.correlation_id))
                    .unwrap_or_else(|| panic!("{at}: response to no captured request"));
                // Decoded as the request's answer: the frame works out
                // the version of its body (v0 for the answer to an
                // unsupported ApiVersions version), which must be the one
                // the capture recorded.
                let decoded = ResponseFrame::decode(&frame.bytes, api, request_version)
                    .unwrap_or_else(|e| panic!("{at}: response does not decode: {e}"));
                assert_eq!(decoded.version, frame.api_version, "{at}: response version");
                assert_eq!(decoded.header.correlation_id, frame.correlation_id, "{at}");
                decoded
                    .encode(&mut again)
                    .unwrap_or_else(|e| panic!("{at}: response does not encode: {e}"));
                assert_eq!(
                    decoded.encoded_len(),
                    frame.bytes.len(),
                    "{at}: encoded_len"
                );
                if let ResponseBody::Fetch(fetch) = &decoded.body {
                    for partition in fetch
                        .responses
                        .iter()
                        .flat_map(|t| t.into_owned().partitions)
                    {
                        let blob = partition.records.as_deref().unwrap_or_default();
                        let set = RecordSet::parse(blob, &DecodeOptions::default())
                            .unwrap_or_else(|e| panic!("{at}: fetched records: {e}"));
                        set.validate()
                            .unwrap_or_else(|e| panic!("{at}: fetched records: {e}"));
                    }
                }
                response_count += 1;
            }
            assert!(again == frame.bytes, "{at}: re-encoded bytes differ");
        }
        assert!(
            request_count > 0 && response_count > 0,
            "{client}: empty capture"
        );
    }
}

#[test]
fn produced_batches_hold_exactly_the_given_messages() {
    for dir in client_dirs() {
        let client = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let expected = load_messages(&dir);
        let mut produced: HashMap<String, Vec<CapturedRecord>> = HashMap::new();
        for frame in load_frames(&dir)
            .iter()
            .filter(|f| f.request && f.api_key == 0)
        {
            let at = format!("{client} #{} (Produce v{})", frame.seq, frame.api_version);
            let decoded = RequestFrame::decode(&frame.bytes)
                .unwrap_or_else(|e| panic!("{at}: request does not decode: {e}"));
            let RequestBody::Produce(produce) = &decoded.body else {
                panic!("{at}: not a Produce body");
            };
            for topic in &produce.topic_data {
                let (codec, _) = expected.get(topic.name.as_ref()).unwrap_or_else(|| {
                    panic!("{at}: topic {} is not in messages.json", topic.name)
                });
                for partition in &topic.partition_data {
                    let blob = partition.records.as_deref().unwrap_or_default();
                    let set = RecordSet::parse(blob, &DecodeOptions::default())
                        .unwrap_or_else(|e| panic!("{at}: records: {e}"));
                    assert_eq!(set.partial_tail, None, "{at}: incomplete batch");
                    for batch in &set.batches {
                        let Batch::V2(batch) = batch else {
                            panic!("{at}: a legacy message set in Produce v3+");
                        };
                        assert_eq!(batch.compression(), *codec, "{at}: {}: codec", topic.name);
                        let header = batch.header();
                        assert!(header.producer_id >= 0, "{at}: not idempotent");
                        assert_eq!(
                            header.timestamp_type(),
                            TimestampType::CreateTime,
                            "{at}: {}: timestamp type",
                            topic.name
                        );
                        let bounds = (header.base_timestamp, header.max_timestamp);
                        for record in batch.records() {
                            let record = record.unwrap_or_else(|e| panic!("{at}: record: {e}"));
                            let headers = record
                                .headers
                                .iter()
                                .map(|h| (h.key.to_owned(), h.value.unwrap_or_default().to_vec()))
                                .collect();
                            let message = (
                                record.key.unwrap_or_default().to_vec(),
                                record.value.unwrap_or_default().to_vec(),
                                headers,
                            );
                            produced.entry(topic.name.to_string()).or_default().push((
                                message,
                                record.timestamp,
                                bounds,
                            ));
                        }
                    }
                }
            }
        }
        assert!(
            !expected.is_empty(),
            "{client}: messages.json lists no topic"
        );
        for (topic, (codec, messages)) in &expected {
            let got = produced.remove(topic).unwrap_or_default();
            assert!(
                got.len() == messages.len() && got.iter().zip(messages).all(|(g, m)| g.0 == m.0),
                "{client}: {topic} ({codec:?}): produced records differ from messages.json: \
                 {} expected, {} captured",
                messages.len(),
                got.len()
            );
            for (i, ((_, timestamp, (base, max)), (_, given))) in
                got.iter().zip(messages).enumerate()
            {
                let at = format!("{client}: {topic} ({codec:?}) record {i}");
                match given {
                    Some(given) => assert_eq!(timestamp, given, "{at}: timestamp"),
                    None => assert!(
                        *timestamp > 0 && (base..=max).contains(&timestamp),
                        "{at}: timestamp {timestamp} is not a plausible CreateTime \
                         (batch timestamps {base}..={max})"
                    ),
                }
            }
        }
    }
}
