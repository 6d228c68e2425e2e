//! The capture reader over captures written here, packet by packet: every
//! test asserts the exact exchanges and events, and none may panic.

use kafka_wire::messages::*;
use kafka_wire::runtime::json::JsonWriter;
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use kafka_wire_capture::{
    read_capture, CaptureError, Config, EventKind, JsonOptions, Output, Tracker,
};
use kafka_wire_test_support::bodies::{
    api_versions_refused, one_record_batch, pre_vote, produce_one_record,
};
use kafka_wire_test_support::frames::{request_bytes, response_bytes};
use kafka_wire_test_support::pcap::{
    pcap, pcapng, Flags, Flow, Frame, Link, EXCHANGE_JSON_KEYS, START,
};
use kafka_wire_test_support::wire::librdkafka_metadata_with_trailing_bytes;
use serde_json::Value;

#[global_allocator]
static ALLOCATOR: kafka_wire_test_support::heap::Tracking = kafka_wire_test_support::heap::Tracking;

fn request(body: RequestBody<'static>, version: i16, correlation_id: i32) -> Vec<u8> {
    request_bytes(version, correlation_id, "capture-test", body)
}

fn response(body: ResponseBody<'static>, version: i16, correlation_id: i32) -> Vec<u8> {
    response_bytes(version, correlation_id, body)
}

fn api_versions(correlation_id: i32) -> (Vec<u8>, Vec<u8>) {
    (
        request(
            ApiVersionsRequest {
                client_software_name: "kafka-wire".into(),
                client_software_version: "0.1".into(),
                ..Default::default()
            }
            .into(),
            3,
            correlation_id,
        ),
        response(ApiVersionsResponse::default().into(), 3, correlation_id),
    )
}

/// A Produce v9 with `acks`, carrying [`one_record_batch`].
fn produce(acks: i16, correlation_id: i32) -> Vec<u8> {
    request(produce_one_record(acks).into(), 9, correlation_id)
}

/// Every output of a capture, in order.
fn read(file: &[u8], config: Config) -> Vec<Output> {
    let mut tracker = Tracker::new(config);
    let mut outputs = Vec::new();
    read_capture(file, &mut tracker, |o| outputs.push(o)).expect("a capture");
    outputs
}

/// A short form of each output: `api vN #id` for an exchange (`-> none`
/// without response), the event's kind and detail otherwise.
fn brief(outputs: &[Output]) -> Vec<String> {
    outputs
        .iter()
        .map(|o| match o {
            Output::Exchange(e) => format!(
                "{} v{} #{}{}",
                e.api.name(),
                e.version,
                e.correlation_id,
                if e.response.is_some() { "" } else { " -> none" }
            ),
            Output::SaslToken(t) => format!(
                "sasl {} round {} {}/{}",
                t.mechanism, t.round, t.client_bytes, t.broker_bytes
            ),
            Output::Event(e) => format!("{}: {}", e.kind, e.detail),
        })
        .collect()
}

fn ethernet_flow() -> Flow {
    Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet)
}

#[test]
fn a_clean_connection_pairs_every_exchange() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let (av_req, av_resp) = api_versions(1);
    frames.extend(flow.send(true, &av_req, 1460));
    frames.extend(flow.send(false, &av_resp, 1460));
    frames.extend(flow.send(true, &produce(1, 2), 1460));
    let produced = ProduceResponse::default();
    frames.extend(flow.send(false, &response(produced.into(), 9, 2), 1460));
    frames.extend(flow.send(true, &produce(0, 3), 1460));
    let fetch = FetchResponse {
        responses: vec![fetch_response::FetchableTopicResponse {
            topic: "orders".into(),
            partitions: vec![fetch_response::PartitionData {
                records: Some(one_record_batch().into()),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    frames.extend(flow.send(true, &request(FetchRequest::default().into(), 12, 4), 1460));
    frames.extend(flow.send(false, &response(fetch.into(), 12, 4), 100));
    frames.extend(flow.close());
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        [
            "ApiVersions v3 #1",
            "Produce v9 #2",
            "Produce v9 #3 -> none",
            "Fetch v12 #4"
        ]
    );
    let json: Vec<Value> = outputs
        .iter()
        .map(|o| o.to_json(&JsonOptions { records: true }))
        .collect();
    assert_eq!(json[0]["time"], "2026-12-07T01:02:03.003000Z");
    assert_eq!(json[0]["client"], "10.0.0.1:50000");
    assert_eq!(json[0]["broker"], "10.0.0.2:9092");
    assert_eq!(json[0]["api"], "ApiVersions");
    assert_eq!(json[0]["correlationId"], 1);
    assert_eq!(json[0]["clientId"], "capture-test");
    assert_eq!(json[0]["latencyUs"], 1000);
    assert_eq!(json[2]["response"], Value::Null);
    assert_eq!(json[2]["latencyUs"], Value::Null);
    let keys: Vec<&str> = json[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, EXCHANGE_JSON_KEYS);
    let produced = &json[1]["request"]["topicData"][0]["partitionData"][0]["records"];
    assert!(produced.to_string().contains("aGVsbG8="), "{produced}");
    assert!(produced.is_array() || produced.is_object(), "{produced}");
    let fetched = &json[3]["response"]["responses"][0]["partitions"][0]["records"];
    assert!(fetched.is_array() || fetched.is_object(), "{fetched}");
    // Without --records, the blob stays base64 text.
    let plain = outputs[1].to_json(&JsonOptions::default());
    assert!(plain["request"]["topicData"][0]["partitionData"][0]["records"].is_string());
    assert_written_as_built(&outputs);
}

/// The text [`Output::write_json`] writes (straight from the bodies where
/// it can) is what serde_json prints for [`Output::to_json`], byte for
/// byte: with and without records, on one line and indented.
fn assert_written_as_built(outputs: &[Output]) {
    for options in [JsonOptions::default(), JsonOptions { records: true }] {
        for output in outputs {
            let built = output.to_json(&options);
            for pretty in [false, true] {
                let mut text = Vec::new();
                output
                    .write_json(&mut JsonWriter::new(&mut text, pretty), &options)
                    .expect("written to a Vec");
                let expected = if pretty {
                    serde_json::to_string_pretty(&built).expect("a JSON value")
                } else {
                    built.to_string()
                };
                assert_eq!(
                    String::from_utf8(text).expect("JSON is UTF-8"),
                    expected,
                    "{options:?}, pretty: {pretty}"
                );
            }
        }
    }
}

/// CRC-32 (IEEE), the checksum of a legacy message.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xedb8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// A legacy (magic 0 or 1) message set entry, uncompressed.
fn legacy_message(offset: i64, magic: i8, key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
    let mut body = vec![magic as u8, 0];
    if magic == 1 {
        body.extend_from_slice(&1_700_000_000_123i64.to_be_bytes());
    }
    for bytes in [key, value] {
        match bytes {
            Some(bytes) => {
                body.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                body.extend_from_slice(bytes);
            }
            None => body.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let mut message = crc32(&body).to_be_bytes().to_vec();
    message.extend_from_slice(&body);
    let mut entry = offset.to_be_bytes().to_vec();
    entry.extend_from_slice(&(message.len() as i32).to_be_bytes());
    entry.extend_from_slice(&message);
    entry
}

/// Records blobs of every kind `--records` meets: a batch compressed with
/// each codec, records with headers, bytes that are not UTF-8 and text
/// that needs escaping, a control batch, an empty batch, legacy message
/// sets, several batches back to back, an incomplete batch at the end, an
/// empty blob, and blobs that do not decode (left as base64).
fn records_blobs() -> Vec<Vec<u8>> {
    use kafka_wire_records::{
        Compression, ControlRecord, ControlRecordType, Header, RecordBatchBuilder,
    };
    let mut blobs = Vec::new();
    for codec in Compression::ALL {
        let mut builder = RecordBatchBuilder::new(100).compression(codec);
        for i in 0..20u8 {
            let value = format!("value {i} {}", codec.name()).repeat(usize::from(i));
            builder
                .append(
                    1_700_000_000_000 + i64::from(i),
                    Some(&[b'k', i]),
                    Some(value.as_bytes()),
                    &[],
                )
                .expect("a record");
        }
        blobs.push(builder.build().expect("a batch"));
    }
    let headers = [
        Header::new("h\n\"1\u{e9}", Some(b"v")),
        Header::new("", None),
        Header::new("bin", Some(&[0xff, 0, 0x80])),
    ];
    let mut builder = RecordBatchBuilder::new(7).compression(Compression::Lz4);
    builder
        .append(1, Some(b"k\t\x01"), Some(&[0xc3, 0x28]), &headers)
        .expect("a record");
    builder.append(2, None, None, &[]).expect("a record");
    builder
        .append(3, Some(b""), Some(b"line\nbreak \\ \x7f"), &headers[..1])
        .expect("a record");
    blobs.push(builder.build().expect("a batch"));
    let mut control = RecordBatchBuilder::new(9).transactional(true);
    control
        .append_control(4, ControlRecord::new(ControlRecordType::Commit), None)
        .expect("a control record");
    blobs.push(control.build().expect("a batch"));
    blobs.push(RecordBatchBuilder::new(0).build().expect("a batch"));
    let mut legacy = legacy_message(5, 0, Some(b"\xff"), Some(b"\"q\""));
    legacy.extend(legacy_message(6, 1, None, Some(b"legacy")));
    blobs.push(legacy);
    let joined = blobs.concat();
    let mut tail = joined.clone();
    tail.extend_from_slice(&blobs[0][..40]);
    let mut bad_crc = blobs[0].clone();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 0xff;
    let mut bad_second = blobs[1].clone();
    bad_second.extend_from_slice(&bad_crc);
    blobs.extend([
        joined,
        tail,
        bad_crc,
        bad_second,
        Vec::new(),
        b"not records".to_vec(),
        vec![0; 20],
    ]);
    blobs
}

#[test]
fn records_are_written_as_their_json_form_builds() {
    let blobs = records_blobs();
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let mut correlation_id = 0;
    let mut exchange = |frames: &mut Vec<Frame>, request: Vec<u8>, response: Vec<u8>| {
        frames.extend(flow.send(true, &request, 1460));
        frames.extend(flow.send(false, &response, 1460));
    };
    let produce = || ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![produce_request::TopicProduceData {
            name: "orders".into(),
            partition_data: blobs
                .iter()
                .enumerate()
                .map(|(index, blob)| produce_request::PartitionProduceData {
                    index: index as i32,
                    records: Some(blob.clone().into()),
                    ..Default::default()
                })
                .chain([produce_request::PartitionProduceData {
                    index: -1,
                    records: None,
                    ..Default::default()
                }])
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let fetched = || FetchResponse {
        responses: vec![fetch_response::FetchableTopicResponse {
            topic: "orders".into(),
            partitions: blobs
                .iter()
                .enumerate()
                .map(|(index, blob)| fetch_response::PartitionData {
                    partition_index: index as i32,
                    records: Some(blob.clone().into()),
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let share_fetched = ShareFetchResponse {
        responses: vec![share_fetch_response::ShareFetchableTopicResponse {
            partitions: blobs
                .iter()
                .enumerate()
                .map(|(index, blob)| share_fetch_response::PartitionData {
                    partition_index: index as i32,
                    records: Some(blob.clone().into()),
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    for version in [3, 9, 13] {
        correlation_id += 1;
        exchange(
            &mut frames,
            request(produce().into(), version, correlation_id),
            response(ProduceResponse::default().into(), version, correlation_id),
        );
    }
    for version in [4, 12, 18] {
        correlation_id += 1;
        exchange(
            &mut frames,
            request(FetchRequest::default().into(), version, correlation_id),
            response(fetched().into(), version, correlation_id),
        );
    }
    correlation_id += 1;
    exchange(
        &mut frames,
        request(ShareFetchRequest::default().into(), 1, correlation_id),
        response(share_fetched.into(), 1, correlation_id),
    );
    frames.extend(flow.close());
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        [
            "Produce v3 #1",
            "Produce v9 #2",
            "Produce v13 #3",
            "Fetch v4 #4",
            "Fetch v12 #5",
            "Fetch v18 #6",
            "ShareFetch v1 #7"
        ]
    );
    // Every codec decoded, and the blobs that do not decode left as base64.
    let json = outputs[1].to_json(&JsonOptions { records: true });
    let partitions = &json["request"]["topicData"][0]["partitionData"];
    for (index, codec) in ["none", "gzip", "snappy", "lz4", "zstd"].iter().enumerate() {
        assert_eq!(
            partitions[index]["records"]["batches"][0]["compression"],
            *codec
        );
        let records = &partitions[index]["records"]["batches"][0]["records"];
        assert_eq!(records.as_array().map(Vec::len), Some(20));
    }
    let count = blobs.len();
    assert!(partitions[count - 5]["records"].is_string());
    assert!(partitions[count - 4]["records"].is_string());
    assert_eq!(
        partitions[count - 3]["records"]["batches"],
        serde_json::json!([])
    );
    assert_eq!(partitions[count - 2]["records"]["partialTail"], 11);
    assert!(partitions[count - 1]["records"].is_string());
    assert_eq!(partitions[count]["records"], Value::Null);
    assert_written_as_built(&outputs);
}

#[test]
fn reordered_duplicated_and_overlapping_segments_reassemble() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let (req, resp) = api_versions(1);
    let segments = flow.send(true, &req, 10);
    // Last first, then the rest; the first segment twice, the second copy
    // with other bytes: the first bytes captured win.
    let mut conflicting = flow.clone();
    conflicting.time = segments[0].time;
    let seq = 1001;
    let bogus = conflicting.segment(
        true,
        seq,
        Flags {
            ack: true,
            ..Flags::default()
        },
        &[0xee; 10],
    );
    let last = segments.len() - 1;
    frames.push(segments[last].clone());
    frames.push(segments[0].clone());
    frames.push(bogus);
    frames.extend(segments[1..last].iter().rev().cloned());
    frames.push(segments[0].clone());
    frames.extend(flow.send(false, &resp, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(brief(&outputs), ["ApiVersions v3 #1"]);
}

#[test]
fn a_lost_segment_is_a_gap_then_a_resync() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let (req1, resp1) = api_versions(1);
    let lost = flow.send(true, &req1, 20);
    frames.extend(lost[1..].iter().cloned());
    frames.extend(flow.send(false, &resp1, 1460));
    let (req2, resp2) = api_versions(2);
    frames.extend(flow.send(true, &req2, 1460));
    frames.extend(flow.send(false, &resp2, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    let skipped = req1.len() - 20;
    assert_eq!(
        brief(&outputs),
        [
            "gap: 20 bytes from the client not captured".to_owned(),
            "unpaired-response: a response with correlation id 1, whose request was not captured"
                .to_owned(),
            format!("resync: {skipped} bytes skipped to the next frame boundary"),
            "ApiVersions v3 #2".to_owned(),
        ]
    );
}

#[test]
fn a_capture_that_starts_mid_connection_resynchronises() {
    let mut flow = ethernet_flow();
    let (req1, resp1) = api_versions(1);
    let (req2, resp2) = api_versions(2);
    // No handshake; the capture starts 7 bytes into the first request.
    let mut frames = flow.send(true, &req1[7..], 1460);
    frames.extend(flow.send(false, &resp1, 1460));
    frames.extend(flow.send(true, &req2, 1460));
    frames.extend(flow.send(false, &resp2, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        [
            format!(
                "resync: {} bytes skipped to the next frame boundary",
                req1.len() - 7
            ),
            format!(
                "resync: {} bytes skipped to the next frame boundary",
                resp1.len()
            ),
            "ApiVersions v3 #2".to_owned(),
        ]
    );
    // Off Kafka's ports, the side whose bytes read as a request is the client.
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:7000", Link::Ethernet);
    let mut frames = flow.send(true, &req2, 1460);
    frames.extend(flow.send(false, &resp2, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(brief(&outputs), ["ApiVersions v3 #2"]);
    let Output::Exchange(exchange) = &outputs[0] else {
        panic!()
    };
    assert_eq!(exchange.broker.to_string(), "10.0.0.2:7000");
}

/// librdkafka 2.16's Metadata v13, three bytes after its body: Kafka
/// answers it, and the reader reads it as Kafka does, the bytes noted.
#[test]
fn a_request_with_bytes_after_its_body_is_read_as_kafka_reads_it() {
    let frame = librdkafka_metadata_with_trailing_bytes();
    let mut sized = (frame.len() as u32).to_be_bytes().to_vec();
    sized.extend_from_slice(&frame);
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &sized, 1460));
    frames.extend(flow.send(
        false,
        &response(MetadataResponse::default().into(), 13, 4),
        1460,
    ));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(brief(&outputs), ["Metadata v13 #4"]);
    let json = outputs[0].to_json(&JsonOptions::default());
    assert_eq!(json["trailingBytes"], 3);
    assert_eq!(json["clientId"], "chaos-admin");
    assert_eq!(
        json["request"],
        serde_json::json!({"topics": null, "allowAutoTopicCreation": false, "includeTopicAuthorizedOperations": false})
    );
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = EXCHANGE_JSON_KEYS.to_vec();
    expected.insert(8, "trailingBytes");
    assert_eq!(keys, expected);
    assert_written_as_built(&outputs);
    // The strict reader still refuses the frame.
    let Output::Exchange(exchange) = &outputs[0] else {
        panic!()
    };
    assert!(exchange.request_parts().unwrap().decode_body().is_err());
}

/// An ApiVersions v3 answer listing every api, as a broker sends it: its
/// first bytes read as a Produce v7 request header.
fn every_api_versions(correlation_id: i32) -> Vec<u8> {
    let answer = ApiVersionsResponse {
        api_keys: ApiKey::ALL
            .iter()
            .map(|api| api_versions_response::ApiVersion {
                api_key: api.key(),
                min_version: api.lowest_version(),
                max_version: api.highest_stable_version(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    response(answer.into(), 3, correlation_id)
}

/// A connection captured mid-stream, off Kafka's ports: the broker's
/// delayed answer to correlation id 7 first, then 8 to 10 asked and
/// answered (what `kafka-protocol fake --fault api-versions:delay=5s:times=1`
/// shows when tcpdump starts during the delay).
fn answer_first(flow: &mut Flow, through: i32) -> Vec<Frame> {
    let mut frames = flow.send(false, &every_api_versions(7), 1460);
    for id in 8..=through {
        frames.extend(flow.send(true, &api_versions(id).0, 1460));
        frames.extend(flow.send(false, &every_api_versions(id), 1460));
    }
    frames
}

/// Without `--port`, a connection captured as the broker answers reads
/// as it does with the port given: the broker's answers are answers, found
/// so by the rule `answers`, which is sure (no `direction` event).
#[test]
fn a_stream_captured_mid_answer_finds_its_client_without_a_port() {
    let mut flow = Flow::new("127.0.0.1:50000", "127.0.0.1:41234", Link::Ethernet);
    let file = pcap(1, false, &answer_first(&mut flow, 10));
    let with_port = read(
        &file,
        Config {
            ports: vec![41234],
            ..Config::default()
        },
    );
    let skipped = every_api_versions(7).len();
    let expected = [
        format!("resync: {skipped} bytes skipped to the next frame boundary"),
        "ApiVersions v3 #8".to_owned(),
        "ApiVersions v3 #9".to_owned(),
        "ApiVersions v3 #10".to_owned(),
    ];
    assert_eq!(brief(&with_port), expected);
    let without = read(&file, Config::default());
    assert_eq!(brief(&without), expected);
    // The same lines, times and addresses included.
    let line = |output: &Output| output.to_json(&JsonOptions::default()).to_string();
    for (ours, theirs) in without.iter().zip(&with_port) {
        let (ours, theirs) = (line(ours), line(theirs));
        assert!(
            ours == theirs,
            "without --port: {ours:.300}\nwith it: {theirs:.300}"
        );
    }
    let exchange = without[1].to_json(&JsonOptions::default());
    assert_eq!(exchange["broker"], "127.0.0.1:41234");
}

/// While the client is not known, the bytes held count against the
/// connection's cap like any others: under a small cap they are dropped,
/// said so, and what follows is still read.
#[test]
fn bytes_held_to_find_the_client_stay_within_the_connection_cap() {
    let mut flow = Flow::new("127.0.0.1:50000", "127.0.0.1:41234", Link::Ethernet);
    let file = pcap(1, false, &answer_first(&mut flow, 10));
    for cap in [600, 2_200, 2_400, 5_000] {
        let config = Config {
            max_connection_bytes: cap,
            ..Config::default()
        };
        let outputs = read(&file, config);
        let lines = brief(&outputs);
        assert!(
            lines.iter().all(|line| line.starts_with("ApiVersions v3 #")
                || line.starts_with("undecodable: a frame in progress")
                || line.starts_with("resync: ")
                || line.starts_with("unpaired-response: ")
                || line.starts_with("unanswered: ")),
            "cap {cap}: {lines:?}"
        );
        // At 600 bytes no answer fits; at 2,200 and 2,400 the bytes held
        // while the client is not known are dropped, and the last
        // exchange still reads.
        if cap >= 2_200 {
            assert!(
                lines.contains(&"ApiVersions v3 #10".to_owned()),
                "cap {cap}: {lines:?}"
            );
        }
        if cap < 5_000 {
            assert!(
                lines[0].starts_with("undecodable: a frame in progress"),
                "{lines:?}"
            );
        }
    }
}

/// When no answer settles it, the reader still finds the client by what
/// the bytes read as, and says that it guessed, and by which rule.
#[test]
fn a_guess_at_the_client_says_which_rule_made_it() {
    // The delayed answer, then one request, unanswered when the capture ends.
    let mut flow = Flow::new("127.0.0.1:50000", "127.0.0.1:41234", Link::Ethernet);
    let mut frames = flow.send(false, &every_api_versions(7), 1460);
    frames.extend(flow.send(true, &api_versions(8).0, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    let skipped = every_api_versions(7).len();
    let lines = brief(&outputs);
    assert!(
        lines[0].starts_with(
            "direction: the client is not known for sure: by rule `request`: no response \
             answered a request: the client's bytes read as a whole ApiVersions v3 request \
             (correlation id 8), the broker's as "
        ),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1..],
        [
            format!("resync: {skipped} bytes skipped: no frame boundary found"),
            "unanswered: ApiVersions v3 request (correlation id 8) never answered: the capture ends"
                .to_owned(),
        ]
    );
    let event = outputs[0].to_json(&JsonOptions::default());
    assert_eq!(
        (&event["client"], &event["broker"]),
        (
            &Value::from("127.0.0.1:50000"),
            &Value::from("127.0.0.1:41234")
        )
    );
    // Both sides send whole requests, none answered: the one that sent
    // first is taken for the client.
    let mut flow = Flow::new("127.0.0.1:50000", "127.0.0.1:41234", Link::Ethernet);
    let mut frames = flow.send(false, &api_versions(1).0, 1460);
    frames.extend(flow.send(true, &api_versions(2).0, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert!(
        brief(&outputs)[0].starts_with(
            "direction: the client is not known for sure: by rule `first-request`: both sides"
        ),
        "{:?}",
        brief(&outputs)
    );
    let event = outputs[0].to_json(&JsonOptions::default());
    assert_eq!(event["client"], "127.0.0.1:41234");
    // Only answers, no request: not Kafka, nothing said.
    let mut flow = Flow::new("127.0.0.1:50000", "127.0.0.1:41234", Link::Ethernet);
    let frames = flow.send(false, &every_api_versions(7), 1460);
    assert!(read(&pcap(1, false, &frames), Config::default()).is_empty());
}

#[test]
fn a_packet_cut_by_the_snap_length_is_a_gap() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let metadata = MetadataResponse {
        brokers: vec![metadata_response::MetadataResponseBroker {
            host: "x".repeat(300).into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let resp = response(metadata.into(), 12, 1);
    frames.extend(flow.send(
        true,
        &request(MetadataRequest::default().into(), 12, 1),
        1460,
    ));
    let cut = flow.send(false, &resp, 1460);
    frames.extend(cut.into_iter().map(|f| f.snap(200)));
    let (req2, resp2) = api_versions(2);
    frames.extend(flow.send(true, &req2, 1460));
    frames.extend(flow.send(false, &resp2, 1460));
    frames.extend(flow.close());
    let outputs = read(&pcap(1, false, &frames), Config::default());
    // 200 bytes captured: 14 Ethernet, 20 IP, 20 TCP, 146 of the response.
    let missing = resp.len() - 146;
    assert_eq!(
        brief(&outputs),
        [
            format!("gap: {missing} bytes from the broker not captured; the frame in progress (146 bytes) is dropped"),
            "unanswered: Metadata v12 request (correlation id 1) never answered: a later request was answered first".to_owned(),
            "ApiVersions v3 #2".to_owned(),
        ]
    );
}

/// One ApiVersions exchange on `flow`, closed.
fn one_exchange(flow: &mut Flow) -> Vec<Frame> {
    let (req, resp) = api_versions(1);
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &req, 1460));
    frames.extend(flow.send(false, &resp, 1460));
    frames.extend(flow.close());
    frames
}

#[test]
fn every_link_type_ipv6_and_vlan() {
    let links = [
        Link::Ethernet,
        Link::Vlan(42),
        Link::Sll,
        Link::Sll2,
        Link::Null,
        Link::Loop,
        Link::Raw,
        Link::RawFamily,
    ];
    for link in links {
        for (client, broker) in [
            ("10.0.0.1:50000", "10.0.0.2:9092"),
            ("[fd00::1]:50000", "[fd00::2]:9092"),
        ] {
            let mut flow = Flow::new(client, broker, link);
            let frames = one_exchange(&mut flow);
            let file = pcap(link.linktype(client.starts_with('[')), false, &frames);
            let outputs = read(&file, Config::default());
            assert_eq!(brief(&outputs), ["ApiVersions v3 #1"], "{link:?} {client}");
            let json = outputs[0].to_json(&JsonOptions::default());
            assert_eq!(
                (json["client"].as_str(), json["broker"].as_str()),
                (Some(client), Some(broker))
            );
        }
    }
}

#[test]
fn pcapng_with_two_interfaces_and_a_nanosecond_pcap() {
    let mut a = Flow::new("10.0.0.1:50000", "10.0.0.2:9092", Link::Ethernet);
    let mut b = Flow::new("[fd00::1]:50001", "[fd00::2]:9092", Link::Sll2);
    b.time += 500_123;
    let frames: Vec<(u32, Frame)> = one_exchange(&mut a)
        .into_iter()
        .map(|f| (0, f))
        .chain(one_exchange(&mut b).into_iter().map(|f| (1, f)))
        .collect();
    let file = pcapng(&[(1, 6), (276, 9)], &frames);
    let outputs = read(&file, Config::default());
    let times: Vec<Value> = outputs
        .iter()
        .map(|o| o.to_json(&JsonOptions::default())["time"].clone())
        .collect();
    assert_eq!(brief(&outputs), ["ApiVersions v3 #1", "ApiVersions v3 #1"]);
    assert_eq!(
        times,
        ["2026-12-07T01:02:03.003000Z", "2026-12-07T01:02:03.003500Z"]
    );

    let mut flow = ethernet_flow();
    flow.time += 123_456_789;
    let outputs = read(&pcap(1, true, &one_exchange(&mut flow)), Config::default());
    let json = outputs[0].to_json(&JsonOptions::default());
    assert_eq!(json["time"], "2026-12-07T01:02:03.126456Z");
    assert_eq!(json["latencyUs"], 1000);
}

/// A fixed pseudo-random byte stream.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as u8
        })
        .collect()
}

#[test]
fn random_bytes_on_a_kafka_port_and_a_frame_claiming_two_gib() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &noise(20_000, 7), 1460));
    frames.extend(flow.send(false, &noise(5_000, 8), 1460));
    frames.extend(flow.close());
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        [
            "undecodable: a size prefix of 1581199761 bytes, above the maximum of 104857600",
            "undecodable: a size prefix of 1955654659 bytes, above the maximum of 104857600",
            "resync: 20000 bytes skipped: no frame boundary found",
            "resync: 5000 bytes skipped: no frame boundary found",
        ]
    );

    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &0x7fff_ffffu32.to_be_bytes(), 1460));
    let (req, resp) = api_versions(1);
    frames.extend(flow.send(true, &req, 1460));
    frames.extend(flow.send(false, &resp, 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        [
            "undecodable: a size prefix of 2147483647 bytes, above the maximum of 104857600",
            "resync: 4 bytes skipped to the next frame boundary",
            "ApiVersions v3 #1",
        ]
    );
}

#[test]
fn legacy_sasl_tokens_are_recognised_and_never_shown() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let handshake = SaslHandshakeRequest {
        mechanism: "PLAIN".into(),
    };
    frames.extend(flow.send(true, &request(handshake.into(), 0, 1), 1460));
    let accepted = SaslHandshakeResponse {
        mechanisms: vec!["PLAIN".into()],
        ..Default::default()
    };
    frames.extend(flow.send(false, &response(accepted.into(), 0, 1), 1460));
    let token = b"\0alice\0hunter2-secret";
    let mut bare = (token.len() as u32).to_be_bytes().to_vec();
    bare.extend_from_slice(token);
    frames.extend(flow.send(true, &bare, 1460));
    frames.extend(flow.send(false, &[0, 0, 0, 0], 1460));
    frames.extend(flow.send(
        true,
        &request(MetadataRequest::default().into(), 12, 2),
        1460,
    ));
    frames.extend(flow.send(
        false,
        &response(MetadataResponse::default().into(), 12, 2),
        1460,
    ));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        [
            "SaslHandshake v0 #1",
            "sasl PLAIN round 1 21/0",
            "Metadata v12 #2"
        ]
    );
    let text: String = outputs
        .iter()
        .map(|o| o.to_json(&JsonOptions::default()).to_string())
        .collect();
    assert!(
        !text.contains("hunter2") && !text.contains("aHVudGVy"),
        "{text}"
    );
    let line = outputs[1].to_json(&JsonOptions::default());
    assert_eq!(line["saslToken"], "PLAIN");
    assert_eq!(line["clientBytes"], 21);
    assert_written_as_built(&outputs);
}

#[test]
fn vote_with_pre_vote_and_the_api_versions_v0_fallback() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    let vote = pre_vote();
    frames.extend(flow.send(true, &request(vote.into(), 2, 1), 1460));
    frames.extend(flow.send(false, &response(VoteResponse::default().into(), 2, 1), 1460));
    frames.extend(flow.send(
        true,
        &request(ApiVersionsRequest::default().into(), 4, 2),
        1460,
    ));
    let refused = api_versions_refused();
    frames.extend(flow.send(false, &response(refused.into(), 0, 2), 1460));
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(brief(&outputs), ["Vote v2 #1", "ApiVersions v4 #2"]);
    let vote = outputs[0].to_json(&JsonOptions::default());
    assert_eq!(
        vote["request"]["topics"][0]["partitions"][0]["preVote"],
        true
    );
    let Output::Exchange(fallback) = &outputs[1] else {
        panic!()
    };
    let parts = fallback.response_parts().unwrap().unwrap();
    assert_eq!(parts.version, 0);
    let json = outputs[1].to_json(&JsonOptions::default());
    assert_eq!(json["response"]["errorCode"], 35);
    assert_written_as_built(&outputs);
}

#[test]
fn tls_is_reported_and_skipped() {
    let mut flow = ethernet_flow();
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00], 1460));
    frames.extend(flow.send(false, &[0x16, 0x03, 0x03, 0x00, 0x5a], 1460));
    frames.extend(flow.close());
    let outputs = read(&pcap(1, false, &frames), Config::default());
    assert_eq!(
        brief(&outputs),
        ["tls: the stream starts with a TLS handshake; it is skipped"]
    );
    // Off Kafka's ports, without --port: not Kafka, nothing said.
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:443", Link::Ethernet);
    let mut frames = flow.handshake();
    frames.extend(flow.send(true, &[0x16, 0x03, 0x01, 0x02, 0x00], 1460));
    frames.extend(flow.send(true, b"GET / HTTP/1.1\r\n\r\n", 1460));
    assert!(read(&pcap(1, false, &frames), Config::default()).is_empty());
}

#[test]
fn a_file_cut_short_and_a_file_that_is_not_a_capture() {
    let mut flow = ethernet_flow();
    let mut file = pcap(1, false, &one_exchange(&mut flow));
    file.truncate(file.len() - 30);
    let outputs = read(&file, Config::default());
    assert_eq!(
        brief(&outputs),
        [
            "ApiVersions v3 #1",
            "truncated-file: the file ends inside a block"
        ]
    );
    let mut tracker = Tracker::default();
    let error = read_capture(&b"hello, world"[..], &mut tracker, |_| {}).unwrap_err();
    assert!(matches!(error, CaptureError::NotACapture(_)), "{error}");
    assert!(read_capture(&b""[..], &mut tracker, |_| {}).is_err());
}

/// The time and detail of the `truncated-file` events of `file`.
fn cut_events(file: &[u8]) -> Vec<(String, String)> {
    read(file, Config::default())
        .iter()
        .filter_map(|o| match o {
            Output::Event(e) if e.kind == EventKind::TruncatedFile => {
                Some((e.time.to_string(), e.detail.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_file_cut_inside_a_packet_gives_the_time_its_header_holds() {
    let cut = "the file ends inside a block".to_owned();
    // `head -c 100`: the file header (24 bytes), the first record's header
    // (16) and 60 of its 74 bytes. No packet was read before it.
    let mut flow = ethernet_flow();
    flow.time += 250_000_000;
    let file = pcap(1, false, &one_exchange(&mut flow));
    assert_eq!(
        cut_events(&file[..100]),
        [("2026-12-07T01:02:03.250000Z".to_owned(), cut.clone())]
    );
    // Nanosecond pcap, cut in the third packet, whose time is not the
    // last packet read's.
    let mut flow = ethernet_flow();
    flow.time += 123_456_789;
    let frames = one_exchange(&mut flow);
    let file = pcap(1, true, &frames);
    let third = 24 + frames[..2].iter().map(|f| 16 + f.data.len()).sum::<usize>();
    assert_eq!(
        cut_events(&file[..third + 20]),
        [("2026-12-07T01:02:03.125456Z".to_owned(), cut.clone())]
    );
    // Cut inside the record's header: the last packet's time.
    assert_eq!(
        cut_events(&file[..third + 10]),
        [("2026-12-07T01:02:03.124456Z".to_owned(), cut.clone())]
    );
    // A big-endian pcap, written by hand: one record, cut in its data.
    let mut big = vec![0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4];
    big.extend_from_slice(&[0; 8]);
    big.extend_from_slice(&65535u32.to_be_bytes());
    big.extend_from_slice(&1u32.to_be_bytes());
    big.extend_from_slice(&1_796_605_323u32.to_be_bytes());
    big.extend_from_slice(&42u32.to_be_bytes());
    big.extend_from_slice(&60u32.to_be_bytes());
    big.extend_from_slice(&60u32.to_be_bytes());
    big.extend_from_slice(&[0; 10]);
    assert_eq!(
        cut_events(&big),
        [("2026-12-07T01:02:03.000042Z".to_owned(), cut.clone())]
    );
    // pcapng: an enhanced packet block cut after its header, on the second
    // interface (nanoseconds).
    let mut a = ethernet_flow();
    a.time += 7_000;
    let frames: Vec<(u32, Frame)> = a.handshake().into_iter().map(|f| (1, f)).collect();
    let file = pcapng(&[(1, 6), (1, 9)], &frames[..1]);
    assert_eq!(
        cut_events(&file[..file.len() - 20]),
        [("2026-12-07T01:02:03.000007Z".to_owned(), cut)]
    );
}

#[test]
fn a_file_cut_inside_its_header_says_so() {
    let mut flow = ethernet_flow();
    let file = pcap(1, false, &one_exchange(&mut flow));
    let ng = pcapng(&[(1, 6)], &[]);
    // A section header with 12 bytes of options: the length it gives.
    let mut long = ng.clone();
    long[4..8].copy_from_slice(&40u32.to_le_bytes());
    for (bytes, format, expected, got) in [
        (&file[..10], "pcap", 24, 10),
        (&file[..23], "pcap", 24, 23),
        (&ng[..10], "pcapng", 28, 10),
        (&long[..30], "pcapng", 40, 30),
        (&ng[..6], "pcapng", 28, 6),
    ] {
        let error = read_capture(bytes, &mut Tracker::default(), |_| {}).unwrap_err();
        match &error {
            CaptureError::CutShort {
                format: f,
                expected: e,
                got: g,
            } => assert_eq!((*f, *e, *g), (format, expected, got), "{error}"),
            other => panic!("{other}"),
        }
    }
    let error = read_capture(&file[..10], &mut Tracker::default(), |_| {}).unwrap_err();
    assert_eq!(
        error.to_string(),
        "a pcap file cut short: its header takes 24 bytes, and there are only 10"
    );
}

/// A capture generated as it is read: `count` connections, each a request
/// and its response and nothing more, never closed.
struct ManyConnections {
    next: u32,
    count: u32,
    buffer: Vec<u8>,
    position: usize,
}

impl std::io::Read for ManyConnections {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.position == self.buffer.len() {
            self.buffer.clear();
            self.position = 0;
            if self.next == 0 {
                self.buffer = pcap(1, false, &[]);
            } else if self.next > self.count {
                return Ok(0);
            }
            if self.next > 0 {
                let i = self.next;
                let client = format!(
                    "10.{}.{}.{}:{}",
                    i >> 16 & 255,
                    i >> 8 & 255,
                    i & 255,
                    40000 + i % 20000
                );
                let mut flow = Flow::new(&client, "10.0.0.2:9092", Link::Ethernet);
                let (req, resp) = api_versions(1);
                let mut frames = flow.send(true, &req, 1460);
                frames.extend(flow.send(false, &resp, 1460));
                let file = pcap(1, false, &frames);
                self.buffer.extend_from_slice(&file[24..]);
            }
            self.next += 1;
        }
        let n = buf.len().min(self.buffer.len() - self.position);
        buf[..n].copy_from_slice(&self.buffer[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

/// A million tiny connections, never closed, through a memory cap of
/// 4 MiB that holds a few thousand of them: the idle longest are evicted,
/// each with an event, the cap's count of bytes is never passed, and the
/// heap stays within three times the cap (the table of connections grows
/// by doubling). About a minute in a debug build.
#[test]
fn a_million_tiny_connections_stay_within_the_memory_cap() {
    let count = 1_000_000;
    let cap = 4 << 20;
    let config = Config {
        max_total_bytes: cap,
        ..Config::default()
    };
    let mut tracker = Tracker::new(config);
    let (mut exchanges, mut evicted, mut other) = (0u32, 0u32, 0u32);
    let input = ManyConnections {
        next: 0,
        count,
        buffer: Vec::new(),
        position: 0,
    };
    let (result, peak) = kafka_wire_test_support::heap::peak_during(|| {
        read_capture(input, &mut tracker, |o| match o {
            Output::Exchange(_) => exchanges += 1,
            Output::Event(e) if e.kind == EventKind::Evicted => evicted += 1,
            _ => other += 1,
        })
    });
    assert!(result.is_ok());
    assert_eq!((exchanges, other), (count, 0));
    let stats = tracker.stats();
    assert!(stats.peak_memory <= cap, "{stats:?}");
    assert_eq!(u64::from(evicted), stats.evicted);
    assert!(evicted > count - count / 100, "{evicted}");
    assert!(peak < 3 * cap, "peak heap {peak} for a cap of {cap}");
}

#[test]
fn raw_segments_can_be_fed_without_a_file() {
    use kafka_wire_capture::{Segment, TcpFlags, Timestamp};
    let (req, resp) = api_versions(9);
    let mut tracker = Tracker::default();
    let client = "127.0.0.1:50000".parse().unwrap();
    let broker = "127.0.0.1:9092".parse().unwrap();
    let flags = TcpFlags::default();
    for (source, destination, seq, payload) in
        [(client, broker, 1, &req), (broker, client, 1, &resp)]
    {
        tracker.segment(&Segment {
            time: Timestamp::from_nanos(START),
            source,
            destination,
            seq,
            ack: 0,
            flags,
            payload,
            missing: 0,
        });
    }
    tracker.finish();
    let outputs: Vec<Output> = std::iter::from_fn(|| tracker.next_output()).collect();
    assert_eq!(brief(&outputs), ["ApiVersions v3 #9"]);
    assert_eq!(tracker.memory(), 0);
    let _ = ApiKey::Produce;
}

/// A live capture (`tcpdump -U -w - | ...`): the first packet is returned
/// as soon as its bytes are there, without waiting for more input. The
/// input here panics when read past what has arrived.
#[test]
fn a_live_capture_is_read_as_it_arrives() {
    struct Arrived {
        bytes: Vec<u8>,
        position: usize,
    }
    impl std::io::Read for Arrived {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let rest = &self.bytes[self.position..];
            assert!(!rest.is_empty(), "read past the bytes that have arrived");
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.position += n;
            Ok(n)
        }
    }
    let mut flow = ethernet_flow();
    let frames = flow.handshake();
    for file in [
        pcap(1, false, &frames[..1]),
        pcapng(&[(1, 6)], &[(0, frames[0].clone())]),
    ] {
        let mut reader = kafka_wire_capture::CaptureReader::new(Arrived {
            bytes: file,
            position: 0,
        })
        .expect("a capture");
        assert!(reader.next_packet().expect("a packet").is_some());
    }
}
