"""Produces and consumes a spec with confluent-kafka (librdkafka bundled in
the wheel); see common.py."""

import sys
import time

from confluent_kafka import (TIMESTAMP_CREATE_TIME, Consumer, KafkaException, Producer,
                             TopicPartition)

from common import expected_count, run, topics
from spec import record_line


def produce(args):
    for topic in args.spec["topics"]:
        codec = topic["codec"]
        errors = []
        producer = Producer({
            "bootstrap.servers": args.bootstrap,
            "client.id": args.client_id,
            "compression.type": codec,
            "enable.idempotence": True,
            "linger.ms": 100,
        })
        for m in topic["messages"]:
            producer.produce(
                topic["topic"],
                key=m["key"].encode(),
                value=m["value"].encode(),
                headers=[(k, v.encode()) for k, v in m["headers"]],
                timestamp=m["timestamp"] or 0,  # 0: librdkafka stamps the current time
                on_delivery=lambda err, msg: err and errors.append(err),
            )
        if producer.flush(30) != 0 or errors:
            raise KafkaException(f"delivery failed: {errors}")
        print(f"confluent-kafka: produced {len(topic['messages'])} to {topic['topic']} ({codec})")


def consume(args):
    consumer = Consumer({
        "bootstrap.servers": args.bootstrap,
        "client.id": args.client_id,
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe(topics(args.spec))
    want = expected_count(args.spec)
    got = 0
    deadline = time.time() + 45
    with open(args.out, "w") as out:
        while got < want and time.time() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                print(f"confluent-kafka: {msg.error()}", file=sys.stderr)
                continue
            timestamp_type, timestamp = msg.timestamp()
            out.write(record_line(msg.topic(), msg.partition(), msg.offset(), msg.key(),
                                  msg.value(), msg.headers(), timestamp,
                                  timestamp_type == TIMESTAMP_CREATE_TIME) + "\n")
            got += 1
    consumer.commit(asynchronous=False)
    committed = consumer.committed([TopicPartition(t, 0) for t in topics(args.spec)], timeout=10)
    for topic, tp in zip(args.spec["topics"], committed):
        if tp.offset != len(topic["messages"]):
            print(f"confluent-kafka: committed offset of {tp.topic} is {tp.offset}", file=sys.stderr)
            return 1
    consumer.close()  # leaves the group
    print(f"confluent-kafka: consumed {got} of {want}, committed, left the group")
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(run(produce, consume))
