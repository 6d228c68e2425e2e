"""The confluent-kafka side of the chaos runs (issue 44, tests/tests/chaos.rs).

An idempotent producer (acks=all) sends --records records, record i to
partition i % --partitions with value i, while a group of --consumers
read_committed consumers (threads of this process; librdkafka works outside
the GIL) reads them until the group has covered every offset the producer
was told of; a record the group reads twice is a redelivery. Then one reader
assigned every partition reads the topic read_committed from the start to
its end and checks that each acknowledged record is there once, in order per
partition. It prints one JSON object with the counts; anything else that
fails exits 1.

Runs in the venv of tests/interop/requirements.txt (confluent-kafka pinned
there), which `bash tests/interop/run.sh --install-only` makes.
"""

import argparse
import json
import sys
import threading
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def common(args, role):
    return {
        "bootstrap.servers": args.bootstrap,
        "client.id": f"{args.client_prefix}-{role}",
        "reconnect.backoff.max.ms": 500,
        "retry.backoff.max.ms": 500,
    }


def create_topic(args):
    """Creates the topic and waits until Metadata lists its partitions; a
    request that fails on a dropped connection is tried again (a retry after
    an answer lost finds the topic there)."""
    admin = AdminClient(common(args, "admin"))
    deadline = time.time() + 60
    created = False
    while True:
        try:
            if not created:
                futures = admin.create_topics(
                    [NewTopic(args.topic, num_partitions=args.partitions)],
                    operation_timeout=30, request_timeout=30)
                for future in futures.values():
                    try:
                        future.result(60)
                    except KafkaException as e:
                        if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                            raise
                created = True
            meta = admin.list_topics(timeout=10).topics.get(args.topic)
            if meta is not None and meta.error is None and len(meta.partitions) == args.partitions:
                return
        except KafkaException as e:
            if not e.args[0].retriable() and e.args[0].code() != KafkaError._TRANSPORT:
                raise
            print(f"admin: {e}, trying again", file=sys.stderr)
        if time.time() > deadline:
            raise RuntimeError(f"topic {args.topic} never listed with its partitions")
        time.sleep(0.1)


class State:
    """What the producer and the group share."""

    def __init__(self, args):
        self.lock = threading.Lock()
        self.acked = bytearray(args.records)
        self.ends = [0] * args.partitions
        self.covered = [set() for _ in range(args.partitions)]
        self.produced = threading.Event()
        self.aborted = threading.Event()
        self.group_read = 0
        self.redelivered = 0
        self.failures = []

    def done(self):
        """Whether the producer is done and the group has as many offsets as
        it was told of (lock held); cheap, for every poll."""
        return self.produced.is_set() and sum(map(len, self.covered)) >= sum(self.ends)

    def missing(self):
        """Offsets below the producer's ends the group has not read (lock held)."""
        return sum(end - sum(1 for o in covered if o < end)
                   for end, covered in zip(self.ends, self.covered))


def produce(args, state):
    producer = Producer({
        **common(args, "producer"),
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 20,
        "batch.size": 262144,
        "queue.buffering.max.messages": 1000000,
        "delivery.timeout.ms": 240000,
    })
    errors = []

    def delivered(err, msg, index):
        if err is not None:
            errors.append(err)
            return
        state.acked[index] = 1
        p = msg.partition()
        state.ends[p] = max(state.ends[p], msg.offset() + 1)

    for i in range(args.records):
        while True:
            try:
                producer.produce(args.topic, value=str(i).encode(), partition=i % args.partitions,
                                 on_delivery=lambda err, msg, i=i: delivered(err, msg, i))
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    left = producer.flush(240)
    if left or errors:
        raise RuntimeError(f"{left} records undelivered, errors {errors[:3]} ({len(errors)})")


def consume(args, state, n, deadline):
    consumer = Consumer({
        **common(args, f"consumer-{n}"),
        "group.id": args.group,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 1000,
    })
    consumer.subscribe([args.topic])
    try:
        while True:
            if state.aborted.is_set():
                return
            if time.time() > deadline:
                with state.lock:
                    missing = state.missing()
                raise RuntimeError(f"consumer {n}: out of time, {missing} offsets missing")
            messages = consumer.consume(num_messages=5000, timeout=0.2)
            with state.lock:
                for msg in messages:
                    if msg.error():
                        if msg.error().code() != KafkaError._PARTITION_EOF:
                            print(f"consumer {n}: {msg.error()}", file=sys.stderr)
                        continue
                    state.group_read += 1
                    covered = state.covered[msg.partition()]
                    if msg.offset() in covered:
                        state.redelivered += 1
                    covered.add(msg.offset())
                if state.done():
                    return
    except Exception as e:  # pylint: disable=broad-except
        state.failures.append(e)
    finally:
        consumer.close()


def verify(args, state, deadline):
    reader = Consumer({
        **common(args, "reader"),
        "group.id": f"{args.group}-reader",
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
    })
    parts = [TopicPartition(args.topic, p, 0) for p in range(args.partitions)]
    ends = []
    for tp in parts:
        while True:
            try:
                _, high = reader.get_watermark_offsets(tp, timeout=30)
                break
            except KafkaException as e:
                # The leader moved, or the connection dropped: ask again.
                if time.time() > deadline or not (e.args[0].retriable() or e.args[0].code() in (
                        KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError._TRANSPORT)):
                    raise
                time.sleep(0.1)
        ends.append(high)
    reader.assign(parts)
    counts = {"read": 0, "duplicated": 0, "outOfOrder": 0, "misplaced": 0}
    seen = bytearray(args.records)
    position = [0] * args.partitions
    following = list(range(args.partitions))
    while any(position[p] < ends[p] for p in range(args.partitions)):
        if time.time() > deadline:
            raise RuntimeError(f"the reader read {counts['read']}, at {position} of {ends}")
        for msg in reader.consume(num_messages=10000, timeout=0.2):
            if msg.error():
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    print(f"reader: {msg.error()}", file=sys.stderr)
                continue
            counts["read"] += 1
            p = msg.partition()
            position[p] = msg.offset() + 1
            i = int(msg.value())
            if i % args.partitions != p:
                counts["misplaced"] += 1
            if seen[i]:
                counts["duplicated"] += 1
                continue
            seen[i] = 1
            if i != following[p]:
                counts["outOfOrder"] += 1
            following[p] = i + args.partitions
    reader.close()
    counts["sent"] = sum(state.acked)
    counts["lost"] = sum(1 for a, s in zip(state.acked, seen) if a and not s)
    counts["unacknowledged"] = sum(1 for a, s in zip(state.acked, seen) if s and not a)
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("bootstrap", "topic", "group"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--client-prefix", default="chaos")
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=12)
    parser.add_argument("--consumers", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    deadline = time.time() + args.timeout
    create_topic(args)
    state = State(args)
    threads = [threading.Thread(target=consume, args=(args, state, n, deadline))
               for n in range(args.consumers)]
    for t in threads:
        t.start()
    try:
        produce(args, state)
    except BaseException:
        state.aborted.set()
        raise
    finally:
        state.produced.set()
        for t in threads:
            t.join()
    if state.failures:
        raise state.failures[0]
    with state.lock:
        missing = state.missing()
    report = verify(args, state, deadline)
    report.update({"redelivered": state.redelivered, "groupRead": state.group_read,
                   "groupMissing": missing})
    print(json.dumps(report))


if __name__ == "__main__":
    main()
