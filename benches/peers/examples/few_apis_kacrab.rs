//! `benches/examples/few_apis_ours.rs` on kacrab-protocol 0.4 with its four
//! codecs (`features = ["compression"]`; it has no per-API features): for
//! ApiVersions, Metadata, Produce and Fetch at every version, encodes a
//! request and decodes the given bytes as the response; reads the records of
//! the input as record batches, and writes one batch with each of the four
//! codecs and reads it back.
//!
//! Usage: `few_apis_kacrab [FILE]` (bytes to decode; 64 zero bytes if none).

use bytes::{Bytes, BytesMut};
use kacrab_protocol::compression::Compression;
use kacrab_protocol::generated::{
    client_api_info, ApiKey, ApiVersionsRequestData, ApiVersionsResponseData, FetchRequestData,
    FetchResponseData, MetadataRequestData, MetadataResponseData, ProduceRequestData,
    ProduceResponseData,
};
use kacrab_protocol::record::{decode_batches, Record, RecordBatch};

/// Decoded messages and encoded bytes so far.
#[derive(Default)]
struct Counts {
    decoded: usize,
    encoded: usize,
    records: usize,
}

/// For each version of `$api`: encodes a request `$request` (a default one)
/// and decodes `$input` as its response `$response` (kacrab's messages share
/// no trait to be generic over).
macro_rules! api {
    ($counts:expr, $request:ty, $response:ty, $api:expr, $input:expr, $out:expr) => {{
        let info = client_api_info($api);
        let request = <$request>::default();
        for version in info.min_version..=info.max_version {
            $out.clear();
            if request.write($out, version).is_ok() {
                $counts.encoded += $out.len();
            }
            if <$response>::read(&mut $input.clone(), version).is_ok() {
                $counts.decoded += 1;
            }
        }
    }};
}

impl Counts {
    /// Reads `blob` as record batches, every record of them.
    fn records(&mut self, blob: Bytes) {
        if let Ok(batches) = decode_batches(&mut blob.clone()) {
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
            eprintln!("few_apis_kacrab: {}: {error}", path.to_string_lossy());
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    let input = Bytes::from(input);
    let mut counts = Counts::default();
    let out = &mut BytesMut::new();
    api!(
        counts,
        ApiVersionsRequestData,
        ApiVersionsResponseData,
        ApiKey::ApiVersions,
        input,
        out
    );
    api!(
        counts,
        MetadataRequestData,
        MetadataResponseData,
        ApiKey::Metadata,
        input,
        out
    );
    api!(
        counts,
        ProduceRequestData,
        ProduceResponseData,
        ApiKey::Produce,
        input,
        out
    );
    api!(
        counts,
        FetchRequestData,
        FetchResponseData,
        ApiKey::Fetch,
        input,
        out
    );
    counts.records(input.clone());
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let batch = RecordBatch {
            base_offset: 0,
            partition_leader_epoch: -1,
            magic: 2,
            attributes: codec as i16,
            last_offset_delta: 0,
            first_timestamp: 0,
            max_timestamp: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: vec![Record {
                attributes: 0,
                timestamp_delta: 0,
                offset_delta: 0,
                key: Some(Bytes::from_static(b"key")),
                value: Some(input.clone()),
                headers: Vec::new(),
            }],
        };
        let mut bytes = BytesMut::new();
        if batch.encode(&mut bytes).is_ok() {
            counts.records(bytes.freeze());
        }
    }
    println!(
        "decoded {} responses, encoded {} bytes of requests, read {} records",
        counts.decoded, counts.encoded, counts.records
    );
}
