//! Decodes, then encodes again, the given bytes as every request and every
//! response of every API at every version, through kafka-wire's body enums.
//!
//! This is the every-API consumer whose clean build `benches/build-cost`
//! times against the same program on kafka-protocol 0.18
//! (`every_api_kafka_protocol.rs`): a binary that links every message's decoder and
//! encoder, as a broker, a proxy or a general client does.
//!
//! Usage: `every_api_ours [FILE]` (a body to decode; 64 zero bytes if none).

use kafka_wire::{ApiKey, RequestBody, ResponseBody};

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("every_api_ours: {}: {error}", path.to_string_lossy());
                std::process::exit(1);
            }
        },
        None => vec![0; 64],
    };
    let (mut decoded, mut encoded) = (0usize, 0usize);
    let mut out = Vec::new();
    for api in ApiKey::ALL {
        for version in api.advertised_lowest_version()..=api.advertised_highest_version(true) {
            if let Ok(body) = RequestBody::decode(&input, api, version) {
                decoded += 1;
                out.clear();
                if body.encode(&mut out, version).is_ok() {
                    encoded += out.len();
                }
            }
            if let Ok(body) = ResponseBody::decode(&input, api, version) {
                decoded += 1;
                out.clear();
                if body.encode(&mut out, version).is_ok() {
                    encoded += out.len();
                }
            }
        }
    }
    println!("decoded {decoded} bodies, encoded {encoded} bytes");
}
