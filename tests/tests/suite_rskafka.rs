//! rskafka 0.6.0's own tests (`tests/suites/rskafka`) against the fake, one
//! broker and three: every test that passed against Kafka 4.4.0
//! (`tests/suites/rskafka/kafka.tsv`) must pass. Skips with a message when
//! the suite is not installed (`tests/suites/run.sh rskafka --install-only`),
//! unless `KAFKA_WIRE_REQUIRE_SUITES` is set.

use kafka_wire_test_support::kafka::one_at_a_time;
use kafka_wire_test_support::suites::check_against_fake;
use kafka_wire_tests::clients::built;

#[test]
fn rskafka_against_one_broker() {
    let _one = one_at_a_time();
    check_against_fake("rskafka", &built("kafka-protocol"), &["--brokers", "1"]);
}

#[test]
fn rskafka_against_three_brokers() {
    let _one = one_at_a_time();
    check_against_fake("rskafka", &built("kafka-protocol"), &["--brokers", "3"]);
}
