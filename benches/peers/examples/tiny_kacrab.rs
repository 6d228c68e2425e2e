//! `benches/examples/tiny_ours.rs` on kacrab-protocol 0.4 at its default
//! features (none): decodes one MetadataResponse (v12) from the given bytes.
//!
//! Usage: `tiny_kacrab [FILE]` (the body to decode; 64 zero bytes if none).

use bytes::Bytes;
use kacrab_protocol::generated::MetadataResponseData;

fn main() {
    let input = match std::env::args_os().nth(1) {
        Some(path) => std::fs::read(&path).unwrap_or_else(|error| {
            eprintln!("tiny_kacrab: {}: {error}", path.to_string_lossy());
            std::process::exit(1)
        }),
        None => vec![0; 64],
    };
    match MetadataResponseData::read(&mut Bytes::from(input), 12) {
        Ok(response) => println!(
            "{} brokers, {} topics",
            response.brokers.len(),
            response.topics.len()
        ),
        Err(error) => println!("not a MetadataResponse v12: {error}"),
    }
}
