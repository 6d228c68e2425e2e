//! Real clients against kafka-wire's programs (issue 20, stage 4): Kafka's
//! Java clients (`tests/java`, `dev.kafkawire.clients.Flow`: admin,
//! idempotent producer, consumer group) and franz-go's kgo (`tests/go`)
//! each run the same flow (create, produce, group consume, commit, leave)
//! against a one-broker fake cluster (`kafka-protocol fake --brokers 1`),
//! directly and through `kafka-protocol proxy`.
//! Through the proxy, every exchange must be in its log, decoded both ways,
//! and every address the clients learn must be the proxy's.
//!
//! The same flows through the proxy in front of real Kafka are in
//! `real_kafka.rs`. Run alone, build the programs first:
//! `cargo build -p kafka-wire-cli`.

use kafka_wire_tests::clients::{
    check_flow, fake_broker, kgo_flow, proxy, run_java, run_kgo, scratch, ProxyLog,
};
use kafka_wire_tests::java::jvm;

const RECORDS: usize = 20;

#[test]
fn java_clients_against_the_fake_directly_and_through_the_proxy() {
    let Some(jvm) = jvm() else { return };
    let dir = scratch("java-fake");
    let broker = fake_broker(&dir);
    let direct = run_java(jvm, broker.address(), "java-direct", RECORDS, None);
    check_flow(&direct, RECORDS, broker.address());

    let (proxy, log) = proxy(&dir, "proxy", broker.address());
    let proxied = run_java(jvm, proxy.address(), "java-proxied", RECORDS, None);
    check_flow(&proxied, RECORDS, proxy.address());
    let log = ProxyLog::read(&log);
    let count = log.check_decoded("java-proxied", proxy.address());
    log.check_java_counts("java-proxied", &proxied);
    kafka_wire_tests::clients::say(&format!(
        "java through the proxy to the fake: {count} exchanges logged, all decoded: {:?}",
        log.counts("java-proxied")
    ));
    assert!(
        broker.stderr().is_empty() || !broker.stderr().contains("closing"),
        "{}",
        broker.stderr()
    );
}

#[test]
fn kgo_against_the_fake_directly_and_through_the_proxy() {
    let Some(kgo) = kgo_flow() else { return };
    let dir = scratch("kgo-fake");
    let broker = fake_broker(&dir);
    let direct = run_kgo(kgo, broker.address(), "kgo-direct", RECORDS, None);
    check_flow(&direct, RECORDS, broker.address());

    let (proxy, log) = proxy(&dir, "proxy", broker.address());
    let proxied = run_kgo(kgo, proxy.address(), "kgo-proxied", RECORDS, None);
    check_flow(&proxied, RECORDS, proxy.address());
    let log = ProxyLog::read(&log);
    let count = log.check_decoded("kgo-proxied", proxy.address());
    log.check_kgo_counts("kgo-proxied", &proxied);
    kafka_wire_tests::clients::say(&format!(
        "kgo through the proxy to the fake: {count} exchanges logged, all decoded: {:?}",
        log.counts("kgo-proxied")
    ));
}
