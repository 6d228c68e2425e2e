#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod address;
mod capture;
mod cluster;
pub mod config;
mod config_table;
mod connection;
pub mod control;
pub mod dispatch;
mod error;
mod handlers;
mod listener;
pub mod probe;
pub mod sasl;
pub mod state;
pub mod versions;

pub use address::{host_port, parse_host_port};
pub use cluster::{FakeCluster, FakeClusterBuilder};
pub use config::{Config, SaslMechanism, SaslUser, StreamsGroupConfig, TopicSpec};
pub use error::Error;
