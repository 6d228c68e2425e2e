//! sarama's functional tests (`tests/suites/sarama`) against the fake with
//! the suite's one setting: five brokers, node ids 1 to 5, each behind its
//! toxiproxy proxy and advertising the proxy's address. Every test that
//! passed against Kafka 4.4.0 (`tests/suites/sarama/kafka.tsv`) must pass.
//! Skips with a message when the suite is not installed
//! (`tests/suites/run.sh sarama --install-only`), unless
//! `KAFKA_WIRE_REQUIRE_SUITES` is set.

use kafka_wire_test_support::kafka::one_at_a_time;
use kafka_wire_test_support::suites::check_against_fake;
use kafka_wire_tests::clients::built;

#[test]
fn sarama_against_five_brokers_behind_toxiproxy() {
    let _one = one_at_a_time();
    check_against_fake("sarama", &built("kafka-protocol"), &[]);
}
