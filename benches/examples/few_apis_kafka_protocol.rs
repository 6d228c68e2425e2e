//! `few_apis_ours.rs` on kafka-protocol 0.18 at
//! `default-features = false, features = ["client"]` and its four codecs:
//! for ApiVersions, Metadata, Produce and Fetch at every version, encodes a
//! request and decodes the given bytes as the response (what `client`
//! compiles: request encoders and response decoders); reads the records of
//! the input as record batches, and writes one batch with each of the four
//! codecs and reads it back.
//!
//! Usage: `few_apis_kafka_protocol [FILE]` (bytes to decode; 64 zero bytes
//! if none).

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, FetchRequest, FetchResponse, MetadataRequest,
    MetadataResponse, ProduceRequest, ProduceResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, Message};
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

/// Decoded messages and encoded bytes so far.
#[derive(Default)]
struct Counts {
    decoded: usize,
    encoded: usize,
    records: usize,
}

impl Counts {
    /// For each version of one API: encodes a request `Q` (a default one)
    /// and decodes `input` as its response `S`.
    fn api<Q: Encodable + Default, S: Message + Decodable>(
        &mut self,
        input: &Bytes,
        out: &mut BytesMut,
    ) {
        let request = Q::default();
        for version in S::VERSIONS.min..=S::VERSIONS.max {
            out.clear();
            if request.encode(out, version).is_ok() {
                self.encoded += out.len();
            }
            if S::decode(&mut input.clone(), version).is_ok() {
                self.decoded += 1;
            }
        }
    }

    /// Reads `blob` as record batches, every record of them.
    fn records(&mut self, blob: Bytes) {
        if let Ok(sets) = RecordBatchDecoder::decode_all(&mut blob.clone()) {
            self.records += sets.iter().map(|set| set.records.len()).sum::<usize>();
        }
    }
}

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!(
                "few_apis_kafka_protocol: {}: {error}",
                path.to_string_lossy()
            );
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    let input = Bytes::from(input);
    let mut counts = Counts::default();
    let mut out = BytesMut::new();
    counts.api::<ApiVersionsRequest, ApiVersionsResponse>(&input, &mut out);
    counts.api::<MetadataRequest, MetadataResponse>(&input, &mut out);
    counts.api::<ProduceRequest, ProduceResponse>(&input, &mut out);
    counts.api::<FetchRequest, FetchResponse>(&input, &mut out);
    counts.records(input.clone());
    let record = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: -1,
        timestamp: 0,
        key: Some(Bytes::from_static(b"key")),
        value: Some(input.clone()),
        headers: Default::default(),
    };
    for compression in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut batch = BytesMut::new();
        let options = RecordEncodeOptions {
            version: 2,
            compression,
        };
        if RecordBatchEncoder::encode(&mut batch, [&record], &options).is_ok() {
            counts.records(batch.freeze());
        }
    }
    println!(
        "decoded {} responses, encoded {} bytes of requests, read {} records",
        counts.decoded, counts.encoded, counts.records
    );
}
