"""kafka-wire's fixtures with confluent-kafka: the README's example, made
demanding. Run from an environment that installed the wheel alone."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, KafkaError, Producer

RECORDS = 1_000


def consume(bootstrap: str, topic: str, count: int, timeout: float = 60.0):
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "readers",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    records = []
    deadline = time.monotonic() + timeout
    try:
        while len(records) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            records.append(message)
    finally:
        consumer.close()
    return records


def test_a_thousand_records_produced_come_back(kafka_cluster):
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap, "acks": "all"})
    failures = []
    for i in range(RECORDS):
        producer.produce(
            "orders",
            key=f"key-{i % 60}",
            value=f"order {i}",
            on_delivery=lambda err, _msg: err and failures.append(err),
        )
    assert producer.flush(30) == 0
    assert failures == []

    records = consume(kafka_cluster.bootstrap, "orders", RECORDS)
    assert sorted(r.value().decode() for r in records) == sorted(f"order {i}" for i in range(RECORDS))
    # In order per partition, one key on one partition.
    by_partition = defaultdict(list)
    partition_of_key = {}
    for record in records:
        by_partition[record.partition()].append(record.offset())
        assert partition_of_key.setdefault(record.key(), record.partition()) == record.partition()
    assert len(by_partition) > 1
    for offsets in by_partition.values():
        assert offsets == list(range(len(offsets)))
    assert kafka_cluster.injected()["error"] == 0


def test_an_injected_error_fails_a_producer_that_does_not_retry(kafka_cluster):
    # A retriable error: a producer that retries would go through.
    control = kafka_cluster.fault("produce:error=NOT_ENOUGH_REPLICAS:times=1")
    assert isinstance(control, int)
    producer = Producer(
        {
            "bootstrap.servers": kafka_cluster.bootstrap,
            "acks": "all",
            "retries": 0,
            "enable.idempotence": False,
        }
    )
    outcomes = []
    producer.produce("orders", value=b"first", on_delivery=lambda err, _msg: outcomes.append(err))
    assert producer.flush(30) == 0
    assert len(outcomes) == 1 and outcomes[0] is not None, outcomes
    assert outcomes[0].code() == KafkaError.NOT_ENOUGH_REPLICAS, outcomes[0]
    assert outcomes[0].code() == 19
    assert kafka_cluster.injected()["error"] == 1

    # The fault fired its one time: the next record goes through.
    producer.produce("orders", value=b"second", on_delivery=lambda err, _msg: outcomes.append(err))
    assert producer.flush(30) == 0
    assert outcomes[1] is None, outcomes[1]
    assert kafka_cluster.stop()["error"] == 1


@pytest.mark.kafka_cluster(brokers=1, topics={"audit": 2}, faults=["produce:error=TOPIC_AUTHORIZATION_FAILED"])
def test_faults_from_the_marker_fail_even_a_retrying_producer(kafka_cluster):
    assert len(kafka_cluster.bootstrap.split(",")) == 1
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap})
    outcomes = []
    producer.produce("audit", value=b"x", on_delivery=lambda err, _msg: outcomes.append(err))
    assert producer.flush(30) == 0
    assert outcomes[0] is not None and outcomes[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert kafka_cluster.injected()["error"] >= 1
