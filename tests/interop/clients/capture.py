"""Reads the frames `kafka-protocol fake --capture FILE` records (JSON lines
in one file), or those the retired `mini_broker --capture DIR` recorded (one
file per connection); CAPTURE below is either.

    capture.py versions DIR --client-prefix P        api -> versions used
    capture.py tail DIR [--client-prefix P] [-n N]   the last frames exchanged
    capture.py check-produce DIR --client-prefix P --spec spec.json
        every Produce batch of each spec topic has the codec the spec gives
        it (fails when a codec silently fell back to none)
    capture.py check-group DIR --client-prefix P
        the consumer committed offsets and left its group
    capture.py extract DIR --client-prefix P --out frames.jsonl
"""

import argparse
import glob
import json
import os
import struct
import sys

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CODEC_NAMES = {v: k for k, v in CODECS.items()}


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


class Reader:
    def __init__(self, data, flexible):
        self.data, self.pos, self.flexible = data, 0, flexible

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"{n} bytes at {self.pos} run past the frame")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int(self, fmt):
        (value,) = struct.unpack(">" + fmt, self.take(struct.calcsize(fmt)))
        return value

    def uvarint(self):
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def length(self):
        """A string, bytes or array length; None for null."""
        n = self.uvarint() - 1 if self.flexible else self.int("h")
        return None if n < 0 else n

    def array_len(self):
        n = self.uvarint() - 1 if self.flexible else self.int("i")
        return None if n < 0 else n

    def bytes(self):
        n = self.uvarint() - 1 if self.flexible else self.int("i")
        return None if n < 0 else self.take(n)

    def string(self):
        n = self.length()
        return None if n is None else self.take(n).decode()

    def tags(self):
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.take(self.uvarint())


def produce_batches(frame_hex):
    """(topic name or topic id hex, partition, batch bytes) of a Produce
    request frame (v3+, the versions Kafka 4 accepts)."""
    data = bytes.fromhex(frame_hex)
    head = Reader(data, False)
    _api, version, _corr = head.int("h"), head.int("h"), head.int("i")
    head.string()  # client id: always an int16-length string
    flexible = version >= 9
    r = Reader(data, flexible)
    r.pos = head.pos
    r.tags()
    r.string()  # transactional id
    r.int("h"), r.int("i")  # acks, timeout
    out = []
    for _ in range(r.array_len() or 0):
        topic = r.take(16).hex() if version >= 13 else r.string()
        for _ in range(r.array_len() or 0):
            partition = r.int("i")
            records = r.bytes() or b""
            r.tags()
            pos = 0
            while pos + 12 <= len(records):
                size = struct.unpack(">i", records[pos + 8:pos + 12])[0]
                out.append((topic, partition, records[pos:pos + 12 + size]))
                pos += 12 + size
        r.tags()
    return out


def batch_codec(batch):
    magic = batch[16]
    if magic != 2:
        return f"magic{magic}"
    attributes = struct.unpack(">h", batch[21:23])[0]
    return CODEC_NAMES.get(attributes & 7, f"codec{attributes & 7}")


def versions(frames):
    table = {}
    for fr in frames:
        if fr["direction"] == "request":
            table.setdefault(fr.get("api_name") or str(fr["api_key"]), set()).add(fr["api_version"])
    return {api: sorted(v) for api, v in sorted(table.items())}


def cmd_check_produce(args, frames):
    with open(args.spec) as f:
        spec = json.load(f)
    want = {t["topic"]: t["codec"] for t in spec["topics"]}
    seen = {}
    problems = []
    for fr in frames:
        if fr["direction"] != "request" or fr["api_key"] != 0:
            continue
        if not (fr.get("client_id") or "").startswith(args.client_prefix):
            continue
        for topic, partition, batch in produce_batches(fr["hex"]):
            codec = batch_codec(batch)
            seen.setdefault(topic, []).append(codec)
    for topic, codec in want.items():
        got = seen.get(topic)
        if not got:
            problems.append(f"no Produce batch captured for {topic}")
        elif any(c != codec for c in got):
            problems.append(f"{topic}: expected {codec} batches, captured {got}")
    for p in problems:
        print(f"check-produce: {p}", file=sys.stderr)
    if not problems:
        summary = ", ".join(f"{t}: {len(seen[t])}x {c}" for t, c in want.items())
        print(f"check-produce: batches have the right codec ({summary})")
    return 1 if problems else 0


def cmd_check_group(args, frames):
    apis = {fr.get("api_name") for fr in frames
            if fr["direction"] == "request" and (fr.get("client_id") or "").startswith(args.client_prefix)}
    missing = [api for api in ("JoinGroup", "SyncGroup", "OffsetCommit", "LeaveGroup") if api not in apis]
    if missing:
        print(f"check-group: {args.client_prefix}: no {', '.join(missing)} request captured", file=sys.stderr)
        return 1
    print(f"check-group: {args.client_prefix} joined, synced, committed and left")
    return 0


def cmd_tail(args, frames):
    for fr in frames[-args.n:]:
        hex_ = fr["hex"]
        shown = hex_ if len(hex_) <= 160 else hex_[:160] + f"... ({len(hex_) // 2} bytes)"
        print(f"  #{fr['seq']} conn {fr['connection']} {fr['direction']:8} "
              f"{fr.get('api_name')} v{fr['api_version']} corr {fr['correlation_id']} "
              f"client {fr.get('client_id')}: {shown}")
    return 0


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
    parser.add_argument("command", choices=["versions", "tail", "check-produce", "check-group", "extract"])
    parser.add_argument("dir")
    parser.add_argument("--client-prefix", default="")
    parser.add_argument("--spec")
    parser.add_argument("--out")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("-n", type=int, default=12)
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
    return {
        "tail": cmd_tail,
        "check-produce": cmd_check_produce,
        "check-group": cmd_check_group,
        "extract": cmd_extract,
    }[args.command](args, frames)


if __name__ == "__main__":
    sys.exit(main())
