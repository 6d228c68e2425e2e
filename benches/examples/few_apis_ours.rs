//! The few-API consumer: what a producing and consuming client links. For
//! ApiVersions, Metadata, Produce and Fetch at every version, it encodes a
//! request and decodes the given bytes as the response (a client's
//! direction: kafka-protocol's `client` feature has no other); it reads the
//! records of the input as record batches (decompressing them), and writes
//! one batch with each of the four codecs and reads it back.
//!
//! `benches/build-cost` builds it with kafka-wire at
//! `default-features = false, features = ["api-versions", "metadata",
//! "produce", "fetch"]` (the four APIs it speaks) and
//! kafka-wire-records with its four codecs (a client must read whatever
//! codec a topic's producers chose), against the same program on each peer
//! (`few_apis_*.rs` here and in `benches/peers/examples/`).
//!
//! Usage: `few_apis_ours [FILE]` (bytes to decode; 64 zero bytes if none).

use kafka_wire::messages::{
    ApiVersionsRequest, ApiVersionsResponse, FetchRequest, FetchResponse, MetadataRequest,
    MetadataResponse, ProduceRequest, ProduceResponse,
};
use kafka_wire::runtime::Message;
use kafka_wire_records::{parse_records, Batch, Compression, DecodeOptions, RecordBatchBuilder};

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
    fn api<'a, Q: Message<'static> + Default, S: Message<'a>>(
        &mut self,
        input: &'a [u8],
        out: &mut Vec<u8>,
    ) {
        let request = Q::default();
        for version in S::LOWEST_VERSION..=S::HIGHEST_VERSION {
            out.clear();
            if request.encode(out, version).is_ok() {
                self.encoded += out.len();
            }
            if S::decode(input, version).is_ok() {
                self.decoded += 1;
            }
        }
    }

    /// Reads `blob` as record batches, every record of them.
    fn records(&mut self, blob: &[u8]) {
        let Ok(set) = parse_records(blob, &DecodeOptions::default()) else {
            return;
        };
        for batch in &set.batches {
            if let Batch::V2(batch) = batch {
                self.records += batch.records().filter(Result::is_ok).count();
            }
        }
    }
}

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!("few_apis_ours: {}: {error}", path.to_string_lossy());
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    let mut counts = Counts::default();
    let mut out = Vec::new();
    counts.api::<ApiVersionsRequest, ApiVersionsResponse>(&input, &mut out);
    counts.api::<MetadataRequest, MetadataResponse>(&input, &mut out);
    counts.api::<ProduceRequest, ProduceResponse>(&input, &mut out);
    counts.api::<FetchRequest, FetchResponse>(&input, &mut out);
    counts.records(&input);
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut batch = RecordBatchBuilder::new(0).compression(codec);
        if batch.append(0, Some(b"key"), Some(&input), &[]).is_ok() {
            if let Ok(bytes) = batch.build() {
                counts.records(&bytes);
            }
        }
    }
    println!(
        "decoded {} responses, encoded {} bytes of requests, read {} records",
        counts.decoded, counts.encoded, counts.records
    );
}
