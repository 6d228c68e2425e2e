//! The errors of starting and running a fake cluster.

use std::net::SocketAddr;

/// Why a fake cluster could not start, or a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is not usable (the message says why).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A broker's listener could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// A bound listener has no local address.
    #[error("cannot read the address of a listener: {0}")]
    LocalAddress(std::io::Error),
    /// The capture file could not be created.
    #[error("cannot create the capture file {path}: {source}")]
    Capture {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A broker task ended abnormally during shutdown.
    #[error("the broker on {0} did not stop cleanly")]
    Shutdown(SocketAddr),
}
