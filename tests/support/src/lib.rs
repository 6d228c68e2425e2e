//! Helpers the test suites of kafka-wire and kafka-wire-records share: a
//! heap-tracking allocator, so that a test can assert how much memory a
//! decode took, a builder of wire bytes by hand, the size-prefix flood
//! that servers must survive, and real Apache Kafka started through
//! `tests/kafka/broker.sh`.
//!
//! Not published: the packages name it as a path-only dev-dependency, which
//! cargo drops from the packages it publishes.

pub mod attack;
pub mod heap;
pub mod kafka;
pub mod pcap;
pub mod wire;
