//! Why a control could not be applied: an unknown or stopped broker, an
//! unknown partition, a limit reached, a port that would not bind.

/// Why a control could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// No broker has this node id.
    #[error("no broker has node id {0}")]
    UnknownBroker(i32),
    /// The broker is stopped.
    #[error("broker {0} is stopped")]
    BrokerDown(i32),
    /// The broker is running.
    #[error("broker {0} is running")]
    BrokerUp(i32),
    /// No such partition.
    #[error("no partition {0}-{1}")]
    UnknownPartition(String, i32),
    /// Every broker is stopped, or the one named is the only one.
    #[error("no other running broker")]
    NoLiveBroker,
    /// Too many request controls (or coordinators moved one by one).
    #[error("at most {0} at once")]
    TooMany(usize),
    /// Too many brokers.
    #[error("at most {0} brokers")]
    TooManyBrokers(usize),
    /// The broker's port could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: String,
        /// Why.
        source: std::io::Error,
    },
}
