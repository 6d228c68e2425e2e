//! Zero-copy encoders and decoders for the Kafka wire protocol.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod records;
pub mod runtime;
