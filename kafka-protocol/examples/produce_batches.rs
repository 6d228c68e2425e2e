//! Produces record batches written by this crate's `RecordBatchBuilder`, one
//! batch per compression codec, to a Kafka broker, so that a real consumer
//! can show it accepts them.
//!
//! ```sh
//! cargo run -p kafka-wire-examples --example produce_batches -- 127.0.0.1:9092 topic 3
//! ```
//!
//! It prints one line per record sent, `key<TAB>value<TAB>codec`, in the order
//! a consumer of the single partition will see them.

use std::borrow::Cow;
use std::error::Error;
use std::io::Write;
use std::net::TcpStream;

use kafka_wire::frame::{read_frame, RequestFrame, ResponseFrame, DEFAULT_MAX_FRAME_SIZE};
use kafka_wire::messages::{
    metadata_request, produce_request, MetadataRequest, ProduceRequest, RequestHeader,
};
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};
use kafka_wire_records::{Compression, Header, RecordBatchBuilder};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// A blocking connection that sends one request and reads its response.
struct Connection {
    stream: TcpStream,
    correlation_id: i32,
}

impl Connection {
    fn call(&mut self, body: RequestBody<'_>, version: i16) -> Result<Vec<u8>> {
        self.correlation_id += 1;
        let api = body.api_key();
        let frame = RequestFrame {
            header: RequestHeader {
                request_api_key: api.key(),
                request_api_version: version,
                correlation_id: self.correlation_id,
                client_id: Some(Cow::Borrowed("kafka-wire-produce-batches")),
                ..Default::default()
            },
            body,
        };
        let mut out = Vec::new();
        frame.encode_with_size(&mut out)?;
        self.stream.write_all(&out)?;
        let response = read_frame(&mut self.stream, DEFAULT_MAX_FRAME_SIZE)?
            .ok_or("the broker closed the connection before answering")?;
        Ok(response)
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [address, topic, count] = args.as_slice() else {
        return Err("usage: produce_batches <host:port> <topic> <records-per-codec>".into());
    };
    let count: usize = count.parse()?;
    let mut connection = Connection {
        stream: TcpStream::connect(address)?,
        correlation_id: 0,
    };

    // Ask for the topic once, so that a broker that creates topics on demand does.
    let metadata = MetadataRequest {
        topics: Some(
            vec![metadata_request::MetadataRequestTopic {
                name: Some(Cow::Borrowed(topic.as_str())),
                ..Default::default()
            }]
            .into(),
        ),
        allow_auto_topic_creation: true,
        ..Default::default()
    };
    connection.call(RequestBody::Metadata(metadata), 12)?;

    let version = 9;
    for (batch, codec) in Compression::ALL.into_iter().enumerate() {
        let mut builder = RecordBatchBuilder::new(0).compression(codec);
        let mut sent = Vec::new();
        for i in 0..count {
            let key = format!("{}-{i}", codec.name());
            let value = format!("builder batch {batch} record {i} ").repeat(20);
            let headers = [Header::new("codec", Some(codec.name().as_bytes()))];
            builder.append(
                1_700_000_000_000 + i as i64,
                Some(key.as_bytes()),
                Some(value.as_bytes()),
                &headers,
            )?;
            sent.push((key, value));
        }
        let records = builder.build()?;
        let request = ProduceRequest {
            acks: -1,
            timeout_ms: 10_000,
            topic_data: vec![produce_request::TopicProduceData {
                name: Cow::Borrowed(topic.as_str()),
                partition_data: vec![produce_request::PartitionProduceData {
                    index: 0,
                    records: Some(Cow::Owned(records)),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        };
        let response = connection.call(RequestBody::Produce(request), version)?;
        let frame = ResponseFrame::decode(&response, ApiKey::Produce, version)?;
        let ResponseBody::Produce(body) = frame.body else {
            return Err("the broker answered with another api".into());
        };
        for partition in body
            .responses
            .into_iter()
            .flat_map(|t| t.partition_responses)
        {
            if let Err(error) = ErrorCode::from_code(partition.error_code).into_result() {
                return Err(format!("{codec} batch rejected with {error}").into());
            }
        }
        for (key, value) in sent {
            println!("{key}\t{value}\t{codec}");
        }
    }
    Ok(())
}
