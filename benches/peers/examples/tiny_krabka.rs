//! `benches/examples/tiny_ours.rs` on krabka-protocol 0.8 at its default
//! features (`arbitrary` and the four codecs): decodes one MetadataResponse
//! (v12) from the given bytes, with its owned types.
//!
//! Usage: `tiny_krabka [FILE]` (the body to decode; 64 zero bytes if none).

use bytes::Bytes;
use krabka_protocol::owned::metadata_response::MetadataResponse;
use krabka_protocol::Decode;

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!("tiny_krabka: {}: {error}", path.to_string_lossy());
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
