"""Reads the frames `kafka-protocol fake --capture FILE` records (JSON lines
in one file), or those the retired `mini_broker --capture DIR` recorded (one
file per connection); CAPTURE below is either. tests/tests/fake_interop.rs
runs it when KAFKA_WIRE_UPDATE_CLIENT_FIXTURES asks it to refresh
fixtures/clients/.

    capture.py versions CAPTURE --client-prefix P        api -> versions used
    capture.py extract CAPTURE --client-prefix P --out frames.jsonl
"""

import argparse
import glob
import json
import os
import sys


def load(directory):
    frames = []
    paths = [directory] if os.path.isfile(directory) else glob.glob(os.path.join(directory, "conn-*.jsonl"))
    for path in paths:
        with open(path) as f:
            frames += [json.loads(line) for line in f if line.strip()]
    frames.sort(key=lambda fr: fr["seq"])
    return frames


def select(frames, prefix):
    """Frames of connections whose requests carry a client id starting with
    prefix (responses are recorded with their request's client id)."""
    if not prefix:
        return frames
    connections = {fr["connection"] for fr in frames
                   if fr["direction"] == "request" and (fr.get("client_id") or "").startswith(prefix)}
    return [fr for fr in frames if fr["connection"] in connections]


def versions(frames):
    table = {}
    for fr in frames:
        if fr["direction"] == "request":
            table.setdefault(fr.get("api_name") or str(fr["api_key"]), set()).add(fr["api_version"])
    return {api: sorted(v) for api, v in sorted(table.items())}


def cmd_extract(args, frames):
    keep = ("seq", "connection", "direction", "api_key", "api_name", "api_version",
            "correlation_id", "client_id", "hex")
    with open(args.out, "w") as f:
        for fr in frames:
            f.write(json.dumps({k: fr.get(k) for k in keep}) + "\n")
    print(f"extract: {len(frames)} frames to {args.out}")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["versions", "extract"])
    parser.add_argument("dir")
    parser.add_argument("--client-prefix", default="")
    parser.add_argument("--out")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    frames = select(load(args.dir), args.client_prefix)
    if args.command == "versions":
        table = versions(frames)
        if args.json:
            print(json.dumps(table))
        else:
            for api, v in table.items():
                print(f"| {api} | {', '.join(map(str, v))} |")
        return 0
    return cmd_extract(args, frames)


if __name__ == "__main__":
    sys.exit(main())
