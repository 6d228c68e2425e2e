"""Produces and consumes a spec with kafka-python (see common.py)."""

import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from common import expected_count, run, topics
from spec import record_line


def produce(args):
    for topic in args.spec["topics"]:
        codec = topic["codec"]
        producer = KafkaProducer(
            bootstrap_servers=args.bootstrap,
            client_id=args.client_id,
            compression_type=None if codec == "none" else codec,
            enable_idempotence=True,
            acks="all",
            linger_ms=100,
        )
        futures = [
            producer.send(
                topic["topic"],
                key=m["key"].encode(),
                value=m["value"].encode(),
                headers=[(k, v.encode()) for k, v in m["headers"]],
                timestamp_ms=m["timestamp"],
            )
            for m in topic["messages"]
        ]
        producer.flush(timeout=30)
        for future in futures:
            future.get(timeout=30)
        producer.close(timeout=10)
        print(f"kafka-python: produced {len(futures)} to {topic['topic']} ({codec})")


def consume(args):
    consumer = KafkaConsumer(
        *topics(args.spec),
        bootstrap_servers=args.bootstrap,
        client_id=args.client_id,
        group_id=args.group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    want = expected_count(args.spec)
    got = 0
    deadline = time.time() + 45
    with open(args.out, "w") as out:
        while got < want and time.time() < deadline:
            for tp, records in consumer.poll(timeout_ms=500).items():
                for r in records:
                    out.write(record_line(r.topic, r.partition, r.offset, r.key, r.value, r.headers,
                                          r.timestamp, r.timestamp_type == 0) + "\n")
                    got += 1
    consumer.commit()
    for topic in args.spec["topics"]:
        tp = TopicPartition(topic["topic"], 0)
        committed = consumer.committed(tp)
        if committed != len(topic["messages"]):
            print(f"kafka-python: committed offset of {tp} is {committed}", file=sys.stderr)
            return 1
    consumer.close()  # leaves the group
    print(f"kafka-python: consumed {got} of {want}, committed, left the group")
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(run(produce, consume))
