"""The messages each producer is given, and the check of what a consumer got.

    spec.py make --client NAME --codecs none,gzip,... --prefix PREFIX --out spec.json
    spec.py verify spec.json consumed.jsonl [--produced-between START END]

A spec lists topics, one per codec, each with a few messages (key, value of
200+ bytes so that every codec really compresses, headers, and a creation
timestamp in ms). Consumers write what they receive as JSON lines (see
``record_line``); ``verify`` requires exactly the spec's keys, values,
headers and timestamps, in order, per topic.

The timestamps are fixed (``BASE_TIMESTAMP + codec_index * 1000 + i``) for
the clients that can set one; kcat's producer cannot (Debian's kcat 1.7.1
has no option for it), so its messages have ``"timestamp": null`` and
``verify`` requires a CreateTime within the time the producer ran
(``--produced-between``, in ms since the epoch), or without it a plausible
one.
"""

import argparse
import base64
import json
import sys
import time

MESSAGES_PER_TOPIC = 3
FILLER = "the quick brown fox jumps over the lazy dog; " * 6
BASE_TIMESTAMP = 1_700_000_000_000
# Producers that take a per-message creation timestamp.
SETS_TIMESTAMPS = {"kafka-python", "confluent-kafka", "kafkajs"}


def make(client, codecs, prefix):
    topics = []
    for codec_index, codec in enumerate(codecs):
        messages = []
        for i in range(MESSAGES_PER_TOPIC):
            timestamp = BASE_TIMESTAMP + codec_index * 1000 + i
            messages.append({
                "key": f"key-{client}-{codec}-{i}",
                "value": f"{client} {codec} message {i}: {FILLER}",
                "headers": [
                    ["idx", str(i)],
                    ["codec", codec],
                    ["note", "h\u00e9ader \u2713"],
                ],
                "timestamp": timestamp if client in SETS_TIMESTAMPS else None,
            })
        topics.append({"topic": f"{prefix}-{codec}", "codec": codec, "messages": messages})
    return {"client": client, "topics": topics}


def b64(data):
    return None if data is None else base64.b64encode(data).decode()


def record_line(topic, partition, offset, key, value, headers, timestamp, create_time):
    """One consumed record as a JSON line; key, value and header values are
    bytes (or None) and are written as base64. timestamp is the record's
    timestamp in ms; create_time whether the consumer reported it as a
    CreateTime (None when the consumer does not tell)."""
    return json.dumps({
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "key": b64(key),
        "value": b64(value),
        "headers": [[k, b64(v)] for k, v in (headers or [])],
        "timestamp": None if timestamp is None else int(timestamp),
        "create_time": create_time,
    })


def expected_line(message):
    return (
        message["key"].encode(),
        message["value"].encode(),
        [(k, v.encode()) for k, v in message["headers"]],
    )


def timestamp_problem(want, got, create_time, produced_between=None):
    """What is wrong with a consumed record's timestamp, or None. want is the
    spec's timestamp; None (kcat produced it) asks for a CreateTime within
    produced_between (start, end) in ms, when given, else for a plausible
    one: positive and not in the future."""
    if create_time is False:
        return f"timestamp type is not CreateTime (timestamp {got})"
    if want is not None:
        return None if got == want else f"timestamp: want {want}, got {got}"
    if produced_between is not None:
        start, end = produced_between
        if not isinstance(got, int) or not start <= got <= end:
            return f"CreateTime {got!r} is not within the produce time {start}..{end}"
        return None
    if not isinstance(got, int) or not 0 < got <= time.time() * 1000 + 60_000:
        return f"timestamp {got!r} is not a plausible CreateTime"
    return None


def verify(spec, consumed, produced_between=None):
    """Returns a list of problems (empty when all is well); see
    timestamp_problem for produced_between."""
    problems = []
    by_topic = {}
    for line in consumed:
        got = json.loads(line)
        unb64 = lambda s: None if s is None else base64.b64decode(s)
        headers = [(k, unb64(v)) for k, v in got["headers"]]
        by_topic.setdefault(got["topic"], []).append(
            (unb64(got["key"]), unb64(got["value"]), headers, got["offset"],
             got.get("timestamp"), got.get("create_time")))
    for topic in spec["topics"]:
        want = [expected_line(m) for m in topic["messages"]]
        got = by_topic.pop(topic["topic"], [])
        if [g[:3] for g in got] != want:
            problems.append(
                f"topic {topic['topic']} ({topic['codec']}): expected {len(want)} messages, "
                f"got {len(got)}; first difference: "
                + next((f"#{i}: want {w!r}, got {g[:3]!r}" for i, (w, g) in enumerate(zip(want, got)) if w != g[:3]),
                       "in the count"))
        for i, (m, g) in enumerate(zip(topic["messages"], got)):
            problem = timestamp_problem(m["timestamp"], g[4], g[5], produced_between)
            if problem:
                problems.append(f"topic {topic['topic']} ({topic['codec']}) #{i}: {problem}")
        offsets = [g[3] for g in got]
        if offsets != sorted(offsets):
            problems.append(f"topic {topic['topic']}: offsets out of order {offsets}")
    for topic in by_topic:
        problems.append(f"unexpected topic {topic}")
    return problems


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("--client", required=True)
    m.add_argument("--codecs", required=True)
    m.add_argument("--prefix", required=True)
    m.add_argument("--out", required=True)
    v = sub.add_parser("verify")
    v.add_argument("spec")
    v.add_argument("consumed")
    v.add_argument("--produced-between", nargs=2, type=int, metavar=("START", "END"))
    args = parser.parse_args()
    if args.command == "make":
        spec = make(args.client, args.codecs.split(","), args.prefix)
        with open(args.out, "w") as f:
            json.dump(spec, f, indent=1, ensure_ascii=False)
            f.write("\n")
        return 0
    with open(args.spec) as f:
        spec = json.load(f)
    with open(args.consumed) as f:
        consumed = [line for line in f if line.strip()]
    problems = verify(spec, consumed, args.produced_between)
    for p in problems:
        print(f"verify: {p}", file=sys.stderr)
    if not problems:
        total = sum(len(t["messages"]) for t in spec["topics"])
        print(f"verify: {total} messages in {len(spec['topics'])} topics match")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
