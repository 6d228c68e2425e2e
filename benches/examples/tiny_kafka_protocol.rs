//! `tiny_ours.rs` on kafka-protocol 0.18 at its default features: decodes
//! one MetadataResponse (v12) from the given bytes.
//!
//! Usage: `tiny_kafka_protocol [FILE]` (the body to decode; 64 zero bytes if
//! none).

use bytes::Bytes;
use kafka_protocol::messages::MetadataResponse;
use kafka_protocol::protocol::Decodable;

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!("tiny_kafka_protocol: {}: {error}", path.to_string_lossy());
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    match MetadataResponse::decode(&mut Bytes::from(input), 12) {
        Ok(response) => println!(
            "{} brokers, {} topics",
            response.brokers.len(),
            response.topics.len()
        ),
        Err(error) => println!("not a MetadataResponse v12: {error}"),
    }
}
