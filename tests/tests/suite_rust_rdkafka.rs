//! rust-rdkafka 0.39.0's own integration tests (`tests/suites/rust-rdkafka`)
//! against the fake: every test that passed against Kafka 4.4.0
//! (`tests/suites/rust-rdkafka/kafka.tsv`) must pass. Its tests assume one
//! broker, node id 0, on port 9092 (test_metadata checks all three), so the
//! fake runs with one broker on that port; the run fails when the port is
//! taken. Skips with a message when the suite is not installed
//! (`tests/suites/run.sh rust-rdkafka --install-only`), unless
//! `KAFKA_WIRE_REQUIRE_SUITES` is set.

use kafka_wire_test_support::kafka::one_at_a_time;
use kafka_wire_test_support::suites::check_against_fake;
use kafka_wire_tests::clients::built;

#[test]
fn rust_rdkafka_against_one_broker() {
    let _one = one_at_a_time();
    check_against_fake(
        "rust-rdkafka",
        &built("kafka-protocol"),
        &["--brokers", "1"],
    );
}
