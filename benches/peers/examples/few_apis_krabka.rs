//! `benches/examples/few_apis_ours.rs` on krabka-protocol 0.8 at
//! `default-features = false, features = ["gzip", "snappy", "lz4", "zstd"]`
//! (its defaults without `arbitrary`, which a client does not need; it has
//! no per-API features): for ApiVersions, Metadata, Produce and Fetch at
//! every version, encodes a request and decodes the given bytes as the
//! response (owned types); reads the records of the input as record batches,
//! and writes one batch with each of the four codecs and reads it back.
//!
//! Usage: `few_apis_krabka [FILE]` (bytes to decode; 64 zero bytes if none).

use bytes::{Bytes, BytesMut};
use krabka_protocol::owned::{api_versions_request, api_versions_response, fetch_request};
use krabka_protocol::owned::{fetch_response, metadata_request, metadata_response};
use krabka_protocol::owned::{produce_request, produce_response};
use krabka_protocol::records::{Attributes, Record, RecordBatch, RecordsPayload};
use krabka_protocol::{Decode, ProtocolRequest};

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
    fn api<Q: ProtocolRequest + Default, S: for<'de> Decode<'de>>(
        &mut self,
        input: &Bytes,
        out: &mut BytesMut,
    ) {
        let request = Q::default();
        for version in Q::MIN_VERSION..=Q::MAX_VERSION {
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
        if let Ok(RecordsPayload::V2(batches)) = RecordsPayload::from_bytes(blob) {
            self.records += batches
                .iter()
                .map(|batch| batch.records.len())
                .sum::<usize>();
        }
    }
}

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!("few_apis_krabka: {}: {error}", path.to_string_lossy());
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    let input = Bytes::from(input);
    let mut counts = Counts::default();
    let out = &mut BytesMut::new();
    counts.api::<api_versions_request::ApiVersionsRequest, api_versions_response::ApiVersionsResponse>(&input, out);
    counts
        .api::<metadata_request::MetadataRequest, metadata_response::MetadataResponse>(&input, out);
    counts.api::<produce_request::ProduceRequest, produce_response::ProduceResponse>(&input, out);
    counts.api::<fetch_request::FetchRequest, fetch_response::FetchResponse>(&input, out);
    counts.records(input.clone());
    // The codec ids of gzip, snappy, lz4 and zstd.
    for codec in 1..=4 {
        let batch = RecordBatch {
            attributes: Attributes(codec),
            records: vec![Record {
                key: Some(Bytes::from_static(b"key")),
                value: Some(input.clone()),
                ..Record::default()
            }],
            ..RecordBatch::default()
        };
        let mut bytes = BytesMut::new();
        if batch.encode_batch(&mut bytes).is_ok() {
            counts.records(bytes.freeze());
        }
    }
    println!(
        "decoded {} responses, encoded {} bytes of requests, read {} records",
        counts.decoded, counts.encoded, counts.records
    );
}
