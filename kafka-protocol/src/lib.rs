//! Zero-copy encoders and decoders for the Kafka wire protocol.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod records;
pub mod runtime;

/// Every message of the Kafka protocol, generated from the schemas in
/// `messages/`: requests, responses, headers, data and metadata records.
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/mod.rs"));
}

pub use messages::{ApiKey, MetadataRecord, RequestBody, ResponseBody};
