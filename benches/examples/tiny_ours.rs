//! The tiny consumer: decodes one MetadataResponse (v12) from the given bytes
//! with kafka-wire at its default features. `benches/build-cost` times its
//! clean build against the same program on each peer (`tiny_*.rs` here and
//! in `benches/peers/examples/`), each at its own default features.
//!
//! Usage: `tiny_ours [FILE]` (the body to decode; 64 zero bytes if none).

use kafka_wire::messages::MetadataResponse;
use kafka_wire::runtime::Message;

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!("tiny_ours: {}: {error}", path.to_string_lossy());
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    match MetadataResponse::decode(&input, 12) {
        Ok(response) => println!(
            "{} brokers, {} topics",
            response.brokers.len(),
            response.topics.len()
        ),
        Err(error) => println!("not a MetadataResponse v12: {error}"),
    }
}
