//! Compare any Kafka-compatible broker with Apache Kafka, request by
//! request and field by field.
//!
//! The same requests go to a *reference* (Apache Kafka) and a *candidate*
//! (any broker that claims to speak Kafka), each reached only over the
//! wire as a client would reach it: bootstrap, Metadata, then each request
//! to the broker a client would choose (a partition's leader, a group's or
//! a transaction's coordinator). Every field of both answers is compared
//! in the codec's JSON form (the form Kafka's JsonConverter writes), after
//! explicit normalization ([`normalize`]) of what differs between any two
//! brokers (ids, epochs, ports, times). Each case gets a verdict, and each
//! difference a path a Kafka developer knows
//! (`topics[0].partitions[2].errorCode`).
//!
//! What is compared:
//!
//! - the **surface** ([`surface`]): the apis, versions and features each
//!   side advertises;
//! - the **sweep** ([`sweep`]): every api and version both advertise, with
//!   a default body and a realistic one;
//! - the **scenarios** ([`scenario`]): stateful flows, step by step, as
//!   data (`scenarios/*.json`).
//! - **replay** ([`replay`]): the requests of a packet capture, renamed to
//!   the run's topics, groups and transactional ids.
//!
//! The package is sans-IO where it can be: [`engine::Engine`] takes cases
//! in and gives requests out, takes answers in and gives verdicts out;
//! the `tokio` feature (default) adds [`driver`], which does the sockets.
//! Cases are data ([`case`]): request bodies in the JSON form with
//! placeholders ([`template`]) for the run's names ([`names`]) and the ids
//! learnt from earlier answers. Reports come in three forms ([`report`]),
//! and an allow list ([`allow`]) accepts known differences with their
//! reasons.
//!
//! ```no_run
//! # #[cfg(feature = "tokio")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
//! use kafka_wire_compat::engine::{Config, Engine};
//!
//! let config = Config::new("127.0.0.1:9092", "127.0.0.1:19092");
//! let engine = Engine::new(config, std::time::Instant::now(), unix_ms());
//! let report = run_blocking(engine, &DriverConfig::default(), |_| {})??;
//! println!("{} cases, {} differ", report.cases.len(), report.remaining());
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "tokio"))]
//! # fn main() {}
//! ```
//!
//! The command line is `kafka-protocol compat` (kafka-wire-cli).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod allow;
pub mod batch;
pub mod body;
pub mod case;
pub mod compare;
#[cfg(feature = "tokio")]
pub mod driver;
pub mod engine;
pub mod error;
pub mod names;
pub mod normalize;
pub mod path;
pub mod replay;
pub mod report;
pub mod sasl;
pub mod scenario;
pub mod side;
pub mod surface;
pub mod sweep;
pub mod template;

pub use allow::AllowList;
pub use case::{Area, Case, Step};
pub use engine::{Config, Engine};
pub use error::Unreachable;
pub use report::{Report, Verdict};
pub use side::Side;
