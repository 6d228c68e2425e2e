//! An example of a crate that generates codecs for schemas of its own.
//!
//! `build.rs` runs [`kafka_codegen::Config`] over `schemas/`, and this file
//! includes the result. The generated code uses the runtime of `kafka-wire`.
#![forbid(unsafe_code)]

/// The messages generated from `schemas/`.
// Kafka's edge-case schemas name fields `foo` and `bar`, which the decoders
// read into locals of the same names.
#[allow(clippy::disallowed_names)]
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/mod.rs"));
}

pub use messages::PreVoteRequest;
