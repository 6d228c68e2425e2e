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
//! - [`watchdog`]: the script's `--owner` watchdog keeps a node while its
//!   owner lives and stops it once the owner ends.
//!
//! The nodes start one at a time. Without Java, Maven or the broker's jars
//! in ~/.m2 the tests skip with a message; `KAFKA_WIRE_REQUIRE_JAVA` makes
//! that a failure.

/// Prints a line past the test harness's capture, so that it shows in a
/// passing run (and in CI's log).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod data;
mod groups;
mod sweep;
mod watchdog;

use std::time::Instant;

use kafka_wire_test_support::kafka::{one_at_a_time, pinned_version, Kafka};

#[test]
fn data_and_groups() {
    let _one = one_at_a_time();
    let Some(kafka) = Kafka::start("data", &pinned_version(), &[]) else {
        return;
    };
    let started = Instant::now();
    let data = data::run(&kafka);
    say!(
        "real broker data: kafka-wire produced {} records in {} batches (every codec; plain, \
         idempotent, transactional committed and aborted), fetched back exactly at the newest \
         Fetch version and at v4; the Java consumer read {}; the Java producer wrote {}, \
         fetched and decoded exactly ({:.1} s)",
        data.records,
        data.batches,
        data.java_read,
        data.java_written,
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let groups = groups::run(&kafka, "kw-data", &data.topic_id);
    say!(
        "real broker groups: classic {} exchanges, KIP-848 consumer {} exchanges, share {} \
         exchanges ({} records acquired and acknowledged) ({:.1} s)",
        groups.classic,
        groups.consumer,
        groups.share,
        groups.share_records,
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn the_watchdog_stops_a_node_once_its_owner_ends() {
    let _one = one_at_a_time();
    watchdog::run();
}
