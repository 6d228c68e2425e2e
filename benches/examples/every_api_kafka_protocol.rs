//! `every_api_ours.rs` on kafka-protocol 0.18 (with its `messages_enums`
//! feature): decodes, then encodes again, the given bytes as every request
//! and every response of every API at every version, through its
//! `RequestKind` and `ResponseKind` enums.
//!
//! Usage: `every_api_kafka_protocol [FILE]` (a body to decode; 64 zero bytes if none).

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => match std::fs::read(&path) {
            Ok(bytes) => Bytes::from(bytes),
            Err(error) => {
                eprintln!(
                    "every_api_kafka_protocol: {}: {error}",
                    path.to_string_lossy()
                );
                std::process::exit(1);
            }
        },
        None => Bytes::from(vec![0; 64]),
    };
    let (mut decoded, mut encoded) = (0usize, 0usize);
    let mut out = BytesMut::new();
    for api in ApiKey::iter() {
        let versions = api.valid_versions();
        for version in versions.min..=versions.max {
            if let Ok(body) = RequestKind::decode(api, &mut input.clone(), version) {
                decoded += 1;
                out.clear();
                if body.encode(&mut out, version).is_ok() {
                    encoded += out.len();
                }
            }
            if let Ok(body) = ResponseKind::decode(api, &mut input.clone(), version) {
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
