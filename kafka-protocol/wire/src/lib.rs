//! Zero-copy encoders and decoders for the Kafka wire protocol.
//!
//! Every message of Kafka 4.4 (its 4.4.0 release: 91 APIs, their headers,
//! the KRaft metadata records and the data schemas) is generated at build
//! time from the schemas in `messages/` into [`messages`]. Decoded values
//! borrow strings, bytes and scalar arrays from the input; the same types,
//! filled with owned values, build messages to send.
//!
//! ```
//! use kafka_wire::messages::{vote_request, VoteRequest};
//! use kafka_wire::runtime::Message;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let request = VoteRequest {
//!     topics: vec![vote_request::TopicData {
//!         topic_name: "__cluster_metadata".into(),
//!         partitions: vec![vote_request::PartitionData {
//!             replica_epoch: 5,
//!             replica_id: 1,
//!             pre_vote: true,
//!             ..Default::default()
//!         }]
//!         .into(),
//!         ..Default::default()
//!     }]
//!     .into(),
//!     ..Default::default()
//! };
//! let bytes = request.to_bytes(2)?; // exact size, no reallocation
//! let decoded = VoteRequest::decode(&bytes, 2)?; // every byte must be consumed
//! assert_eq!(decoded, request);
//!
//! // Arrays of structs are read element by element.
//! for topic in &decoded.topics {
//!     for partition in &topic.partitions {
//!         assert!(partition.pre_vote);
//!     }
//! }
//! // Re-encoding a decoded message copies its arrays, which are canonical.
//! assert!(decoded.topics.encodes_by_copy(2));
//! assert_eq!(decoded.to_bytes(2)?, bytes);
//! # Ok(())
//! # }
//! ```
//!
//! Design notes:
//!
//! - Strings are `Cow<'a, str>` (validated UTF-8), bytes and records are
//!   `Cow<'a, [u8]>`, and arrays of scalars are [`runtime::ScalarArray`],
//!   kept in wire form so that decoding them allocates nothing.
//! - Arrays of structs are [`runtime::StructArray`]. Decoding checks every
//!   element (a fault anywhere is an error from `decode`, with its offset
//!   and field path). Arrays of two or more elements that hold arrays that
//!   are never null are decoded into a `Vec` of elements that borrow from
//!   the input, so iteration hands out references and `get` is an index;
//!   other arrays are kept as checked wire bytes and each element is
//!   decoded when read. Re-encoding a decoded array at the same version copies its bytes
//!   when they are exactly what encoding its elements would write
//!   ([`runtime::StructArray::encodes_by_copy`]), so that equal values always
//!   encode alike. Arrays built in code are `Vec`s (`vec![..].into()` or
//!   `collect()`); [`runtime::StructArray::to_mut`] gives the `Vec` to
//!   change.
//! - Encoding appends to a `Vec<u8>` or a `bytes::BytesMut`
//!   ([`runtime::EncodeBuf`]) after reserving the exact size once. The
//!   encoders write through one concrete [`runtime::Writer`] rather than
//!   being generic over `BufMut`, so they are compiled once, in this crate,
//!   not again in every crate that encodes; to fill another kind of buffer,
//!   encode into a `Vec<u8>` and copy it.
//! - Decoding takes at most four times the input plus 64 KiB of heap. An
//!   array that would not fit is kept as checked wire bytes (see
//!   [`runtime::StructArray`]).
//! - Tagged fields may arrive in any order; a repeated tag is rejected with
//!   [`runtime::DecodeErrorKind::DuplicateTag`]. Unknown tags are kept and
//!   written back in tag order.
//! - A null `records` value in a version where the field is not nullable is
//!   written as empty.
//!
//! This package is the message codec alone. Record batches and their
//! compression codecs are the `kafka-wire-records` package, the proxy
//! connection layer `kafka-wire-proxy`, and the `kafka-protocol` tool
//! `kafka-wire-cli`; depending on this one compiles none of them.
//!
//! The generated messages ship in the package (`src/messages/`), so a
//! build compiles no generator: a test keeps them equal to what
//! kafka-codegen writes from `messages/`, and the `regenerate` feature
//! generates them again at build time instead. Errors implement `Display`
//! and `Error` by hand, for the same reason: a derive macro would put a
//! parser of Rust (syn) into every user's build.
//!
//! Features choose what is compiled. `all-apis` (default) generates every
//! API and the KRaft metadata records (`metadata-records`, which no API
//! needs); `client-apis` only the APIs brokers
//! serve to clients, and `controller-apis` only those controllers serve;
//! and each API has a feature of its own, named as the API in kebab-case
//! (`produce`, `fetch`, `api-versions`, `describe-cluster`), so that a
//! client that speaks four APIs compiles those four:
//!
//! ```toml
//! kafka-wire = { version = "0.1", default-features = false, features = ["api-versions", "metadata", "produce", "fetch"] }
//! ```
//!
//! `ApiKey`, the body enums and frames need one API; `negotiate` and
//! `api_versions` need ApiVersions. Without any API only headers, data
//! schemas, the runtime and the frame splitter remain. `json` adds the JSON
//! form, and `tokio` a tokio-util frame codec ([`frame::FrameCodec`]).
//!
//! Every generated function is `#[inline]`, so that a user's build compiles
//! only the messages its code calls, in the user's crate: a program that
//! decodes one MetadataResponse compiles that response and nothing else.
//! The `precompile` feature turns this off: kafka-wire then compiles every
//! enabled message itself, once, which suits programs that use most of the
//! messages they enable (a broker, a proxy that dispatches on
//! [`RequestBody`], a client with the features of its few APIs), whose own
//! rebuilds then compile none of them. `into_owned` is the exception: it is
//! always compiled where it is called.
// Three modules are unsafe, `runtime::element_vec`, `runtime::section_box`
// and `runtime::utf8`, and each says why; every other module may not be.
#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "api-versions")]
pub mod api_versions;
pub mod frame;
#[cfg(feature = "api-versions")]
pub mod negotiate;
pub mod runtime;

/// Every message of the Kafka protocol, generated from the schemas in
/// `messages/`: requests, responses, headers, data and metadata records.
///
/// The generated source ships in `src/messages/` (a test regenerates it and
/// fails on any difference); the `regenerate` feature generates it again at
/// build time instead.
#[cfg(not(feature = "regenerate"))]
#[rustfmt::skip]
pub mod messages;

/// Every message of the Kafka protocol, generated at build time from the
/// schemas in `messages/` (the `regenerate` feature).
#[cfg(feature = "regenerate")]
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/mod.rs"));
}

/// Kafka's error codes, generated from the table in `error_codes.tsv`.
#[cfg(not(feature = "regenerate"))]
#[rustfmt::skip]
mod error_code;

/// Kafka's error codes, generated at build time from `error_codes.tsv`.
#[cfg(feature = "regenerate")]
mod error_code {
    include!(concat!(env!("OUT_DIR"), "/error_code.rs"));
}

pub use error_code::ErrorCode;
#[cfg(kafka_metadata)]
pub use messages::MetadataRecord;
#[cfg(kafka_apis)]
pub use messages::{ApiKey, Request, RequestBody, ResponseBody};
pub use runtime::IntoOwned;
