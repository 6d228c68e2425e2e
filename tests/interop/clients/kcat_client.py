"""Produces and consumes a spec with kcat (Debian's, on librdkafka 2.0.2);
see common.py. kcat sets headers per invocation (-H), so each message is
produced by its own kcat run, with the topic's codec and idempotence on.
kcat's producer cannot set a message timestamp (librdkafka stamps the
CreateTime); the consumer reports the timestamp and its type (-J)."""

import json
import subprocess
import sys

from common import expected_count, run, topics
from spec import record_line

KCAT = "kcat"


def produce(args):
    for topic in args.spec["topics"]:
        for m in topic["messages"]:
            command = [
                KCAT, "-b", args.bootstrap, "-t", topic["topic"], "-P",
                "-X", f"client.id={args.client_id}",
                "-X", "enable.idempotence=true",
                "-z", topic["codec"],
                "-K", "|",
            ]
            for k, v in m["headers"]:
                command += ["-H", f"{k}={v}"]
            line = f"{m['key']}|{m['value']}\n"
            subprocess.run(command, input=line.encode(), check=True, timeout=30)
        print(f"kcat: produced {len(topic['messages'])} to {topic['topic']} ({topic['codec']})")


def consume(args):
    command = [
        KCAT, "-b", args.bootstrap, "-G", args.group,
        "-X", f"client.id={args.client_id}",
        "-X", "auto.offset.reset=earliest",
        "-e", "-J", "-q",
        *topics(args.spec),
    ]
    run = subprocess.run(command, capture_output=True, check=True, timeout=50)
    got = 0
    with open(args.out, "w") as out:
        for line in run.stdout.decode().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            flat = r.get("headers") or []
            headers = [(flat[i], None if flat[i + 1] is None else flat[i + 1].encode())
                       for i in range(0, len(flat), 2)]
            key = None if r.get("key") is None else r["key"].encode()
            value = None if r.get("payload") is None else r["payload"].encode()
            create_time = None if r.get("tstype") is None else r["tstype"] == "create"
            out.write(record_line(r["topic"], r["partition"], r["offset"], key, value, headers,
                                  r.get("ts"), create_time) + "\n")
            got += 1
    print(f"kcat: consumed {got} of {expected_count(args.spec)} (commit and leave on exit)")
    return 0 if got == expected_count(args.spec) else 1


if __name__ == "__main__":
    sys.exit(run(produce, consume))
