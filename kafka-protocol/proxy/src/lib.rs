//! A sans-IO connection layer for Kafka proxies.
//!
//! [`Connection`] sits between one client and one broker. It does no I/O:
//! feed it the bytes each side sent, in pieces of any size, and it splits
//! them into frames, reads each request's header (api, version, correlation
//! id), pairs each response with the request it answers by correlation id
//! (a response does not say its own api or version), and hands both to a
//! [`Filter`], which decides per frame:
//!
//! - [`RequestAction::Forward`] / [`ResponseAction::Forward`]: pass the
//!   frame through byte for byte, decoding nothing;
//! - `Replace(body)`: decode it, change it, re-encode it. Arrays left
//!   untouched are copied as bytes
//!   ([`kafka_wire::runtime::StructArray::encodes_by_copy`]);
//! - [`RequestAction::Respond`]: answer the client without the broker.
//!
//! It knows that a Produce with `acks=0` gets no response, that an
//! ApiVersions response always has header v0, and that a broker answers an
//! ApiVersions version it does not support with a v0 body carrying
//! UNSUPPORTED_VERSION ([`ProxiedResponse::version`] is then 0). Frames
//! above [`Config::max_frame_size`], more than [`Config::max_in_flight`]
//! requests awaiting answers, a malformed header or a response to an
//! unknown correlation id fail that connection with a [`ProxyError`].
//!
//! SASL passes through in both forms. SaslHandshake v1 and SaslAuthenticate
//! are requests like any other. After a SaslHandshake v0, the legacy form,
//! the mechanism's tokens travel as bare size-prefixed frames with no Kafka
//! header: the connection tracks that per connection, relays those frames
//! untouched without reading a header, pairs each with the broker's bare
//! answer, hands the pair to [`Filter::on_sasl_token`] and reads requests
//! again once the mechanism's last token is answered (PLAIN: one token,
//! SCRAM-SHA-256/512: two, OAUTHBEARER: one, or two after an error). For a
//! mechanism whose token count it cannot know (GSSAPI), the rest of the
//! connection is relayed untouched ([`Connection::is_opaque`]).
//!
//! With the `tokio` feature, [`serve::proxy_connection`] runs a
//! [`Connection`] between two sockets.
//!
//! ```
//! use kafka_wire_proxy::{Config, Connection, Filter, ProxiedRequest, RequestAction};
//! use kafka_wire::runtime::DecodeError;
//! use kafka_wire::RequestBody;
//!
//! /// Makes every Metadata request ask for no topics.
//! struct NoTopics;
//!
//! impl Filter for NoTopics {
//!     fn on_request<'a>(
//!         &mut self,
//!         request: &'a ProxiedRequest,
//!     ) -> Result<RequestAction<'a>, DecodeError> {
//!         match request.decode_body()? {
//!             RequestBody::Metadata(mut metadata) => {
//!                 metadata.topics = Some(Vec::new().into());
//!                 Ok(RequestAction::Replace(metadata.into()))
//!             }
//!             _ => Ok(RequestAction::Forward),
//!         }
//!     }
//! }
//!
//! let mut connection = Connection::new(Config::default());
//! // An ApiVersions v0 request from "c", correlation id 7, in two pieces.
//! let request = b"\x00\x00\x00\x0b\x00\x12\x00\x00\x00\x00\x00\x07\x00\x01c";
//! connection.feed_client(&request[..5], &mut NoTopics)?;
//! assert!(connection.take_for_broker().is_empty());
//! connection.feed_client(&request[5..], &mut NoTopics)?;
//! assert_eq!(connection.take_for_broker().to_vec(), request);
//! assert_eq!(connection.in_flight(), 1);
//! # Ok::<(), kafka_wire_proxy::ProxyError>(())
//! ```
//!
//! Bounded memory: a connection holds at most one partial frame per side
//! (checked against the maximum as soon as its size prefix arrives), the
//! headers of the requests in flight (their bodies too with
//! [`Config::keep_request_bodies`]), and the output not yet taken.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod budget;
mod connection;
mod error;
mod filter;
mod outgoing;
mod proxied;
#[cfg(feature = "json")]
pub mod redact;
pub mod sasl;
#[cfg(feature = "tokio")]
pub mod serve;
#[cfg(test)]
mod tests;

pub use budget::{BudgetExceeded, BufferBudget};
pub use connection::{Config, Connection, DEFAULT_MAX_IN_FLIGHT};
pub use error::{ProxyError, Side};
pub use filter::{Filter, PassThrough, RequestAction, ResponseAction};
pub use kafka_wire::frame::DEFAULT_MAX_FRAME_SIZE;
pub use outgoing::Outgoing;
pub use proxied::{ProxiedRequest, ProxiedResponse};
pub use sasl::SaslToken;
