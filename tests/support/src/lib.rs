//! Helpers the test suites of kafka-wire and kafka-wire-records share: a
//! heap-tracking allocator, so that a test can assert how much memory a
//! decode took, a builder of wire bytes by hand, the size-prefix flood
//! that servers must survive, and real Apache Kafka started through
//! `tests/kafka/broker.sh`, the program under test run with its input,
//! tcpdump capturing loopback, and outside client suites held to what
//! passed against Kafka (`suites`). With the `frames` feature: frames
//! over blocking streams (read through kafka-wire's `read_frame`) and a
//! thread-based fake broker, for the suites that play a client or a
//! broker.
//! With the `bodies` feature: message bodies that more than one suite
//! sends (a Produce with a batch of one record, a pre-vote Vote, an
//! ApiVersions refusal).
//!
//! Not published: the packages name it as a path-only dev-dependency, which
//! cargo drops from the packages it publishes.

pub mod attack;
#[cfg(feature = "bodies")]
pub mod bodies;
#[cfg(feature = "frames")]
pub mod fake_broker;
#[cfg(feature = "frames")]
pub mod frames;
pub mod heap;
pub mod kafka;
pub mod pcap;
pub mod process;
pub mod suites;
pub mod tcpdump;
pub mod wire;
