//! Why a proxied connection failed. Every error ends that one connection,
//! never the proxy.

use kafka_wire::runtime::{DecodeError, EncodeError};

/// Which peer of a proxied connection sent the bytes at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The client, which sends requests.
    Client,
    /// The broker, which sends responses.
    Broker,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Broker => "broker",
        })
    }
}

/// Why a proxied connection must be closed.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// A size prefix is negative.
    #[error("{side} sent a negative frame size {size}")]
    NegativeSize {
        /// Who sent it.
        side: Side,
        /// The size prefix as read.
        size: i32,
    },
    /// A frame is larger than the configured maximum; nothing was buffered
    /// for it.
    #[error("{side} sent a frame of {size} bytes, above the maximum of {max}")]
    FrameTooLarge {
        /// Who sent it.
        side: Side,
        /// The frame's announced size.
        size: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A frame is too short to hold its header, or its header is malformed.
    #[error("{side} sent a malformed header: {source}")]
    BadHeader {
        /// Who sent it.
        side: Side,
        /// Where in the frame (after the size prefix) the fault is.
        #[source]
        source: DecodeError,
    },
    /// The broker answered a correlation id that no request in flight on
    /// this connection carries.
    #[error("broker answered correlation id {correlation_id}, which no request in flight carries")]
    UnknownCorrelationId {
        /// The correlation id in the response header.
        correlation_id: i32,
    },
    /// The client has more requests awaiting an answer than the configured
    /// maximum.
    #[error("client has more than {max} requests in flight")]
    TooManyInFlight {
        /// The configured maximum.
        max: usize,
    },
    /// A filter could not decode the frame it asked to change.
    #[error("filter could not decode a frame from the {side}: {source}")]
    FilterDecode {
        /// Who sent the frame.
        side: Side,
        /// The decoding fault.
        #[source]
        source: DecodeError,
    },
    /// A frame a filter built could not be encoded.
    #[error("could not encode a frame for the {side}: {source}")]
    Encode {
        /// Who the frame was for.
        side: Side,
        /// The encoding fault.
        #[source]
        source: EncodeError,
    },
    /// The connection failed earlier and takes no more bytes.
    #[error("the connection already failed")]
    Closed,
}
