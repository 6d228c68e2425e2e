//! kafka-wire against real Apache Kafka, started by `tests/kafka/broker.sh`
//! on loopback:
//!
//! - [`sweep`]: every API and version a broker advertises, on its client
//!   listener and its controller listener, sent and answered; every answer
//!   decodes at its version, consumes every byte and re-encodes to the same
//!   bytes. Against the pinned release and the older `broker.old.version`,
//!   each on a node of its own.
//! - [`data`]: topics, batches in every codec from idempotent and
//!   transactional producers, fetched back at the newest Fetch version and
//!   at v4, read by the Java consumer; the Java producer's batches fetched
//!   and decoded by kafka-wire.
//! - [`groups`]: a classic consumer group, a KIP-848 consumer group and a
//!   share group, each a real exchange.
//!
//! The nodes start one at a time. Without Java, Maven or the broker's jars
//! in ~/.m2 the tests skip with a message; `KAFKA_WIRE_REQUIRE_JAVA` makes
//! that a failure.

mod sweep;
