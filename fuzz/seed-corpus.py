#!/usr/bin/env python3
"""Seeds fuzz/corpus/<target>/ from the golden fixtures and record batches.

The corpora are not committed (see .gitignore): run this before fuzzing,
locally and in CI. It only adds files (named by their SHA-1, as libFuzzer
names its own), so running it again over an existing corpus is harmless.

Input layouts, as decoded by fuzz/src/lib.rs:
  request_frame  api_key:i16 api_version:i16 correlation_id:i32
                 client_id:string [tagged fields when flexible] body
  response_body  [api_key, version] body
  round_trip     [kind, api_key, version] body      kind 0 request, 1 response
  json           [kind, api_key, version] body      as round_trip
                 [kind | 2, api_key, version] JSON text (the golden value)
  record_batch   [mode] records blob   mode bit 0: recompute checksums first
                 (blobs: the fixtures of kafka-protocol's records tests)
  record_stream  [mode] records blob   as record_batch; bit 1: pretty JSON,
                 bit 2: a small budget for the whole blob
  capture        [0] pcap packet records after an Ethernet pcap header
                 (a golden request frame in one TCP segment);
                 [1] (control, length, payload)... TCP segments of the
                 same frame (see fuzz_targets/capture.rs)
"""

import base64
import hashlib
import json
import pathlib
import re
import struct
import sys

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent
GOLDEN = ROOT / "fixtures" / "golden"
MESSAGES = ROOT / "messages"
RECORD_FIXTURES = ROOT / "kafka-protocol" / "records" / "src" / "tests" / "fixtures.rs"


def load_json(path):
    """Kafka schema files may hold // comments; strip them before parsing."""
    text = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)
    return json.loads(text)


def first_flexible(name):
    """The first flexible version of schema `name`, or None."""
    path = MESSAGES / f"{name}.json"
    if not path.exists():
        return None
    spec = load_json(path).get("flexibleVersions", "none")
    return None if spec == "none" else int(spec.rstrip("+"))


def write(corpus, target, data):
    directory = corpus / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)
    return 1


def request_frame(key, version, flexible, body):
    client_id = b"fuzz"
    header = struct.pack(">hhih", key, version, 1, len(client_id)) + client_id
    if flexible:
        header += b"\x00"  # no tagged fields
    return header + body


def tcp_packet(seq, payload):
    """A pcap packet record: Ethernet, IPv4 and TCP (PSH|ACK) from
    10.0.0.1:50000 to 10.0.0.2:9092, checksums left 0."""
    tcp = struct.pack(">HHIIBBHHH", 50000, 9092, seq, 1, 0x50, 0x18, 65535, 0, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 1, 0x4000,
                     64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    frame = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + b"\x08\x00" + ip + tcp + payload
    return struct.pack("<IIII", 1796605323, 0, len(frame), len(frame)) + frame


def capture_seeds(frame):
    """The capture target's inputs for one size-prefixed frame."""
    packets = tcp_packet(1000, frame) if len(frame) <= 1400 else b""
    segments = b"".join(bytes([0, len(chunk)]) + chunk
                        for chunk in (frame[i:i + 255] for i in range(0, len(frame), 255)))
    return [b"\x00" + packets, b"\x01" + segments]


def main():
    corpus = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else FUZZ / "corpus"
    counts = {}

    def add(target, data):
        counts[target] = counts.get(target, 0) + write(corpus, target, data)

    for path in sorted(GOLDEN.glob("*.json")):
        fixture = load_json(path)
        kind = fixture.get("type")
        key = fixture.get("apiKey")
        if kind not in ("request", "response") or key is None:
            continue
        flexible_from = first_flexible(fixture["name"])
        kind_byte = 0 if kind == "request" else 1
        for case in fixture["cases"]:
            version = case["version"]
            body = bytes.fromhex(case["hex"])
            selector = bytes([kind_byte, key, version])
            add("round_trip", selector + body)
            add("json", selector + body)
            text = json.dumps(case["value"], separators=(",", ":")).encode()
            add("json", bytes([kind_byte | 2, key, version]) + text)
            if kind == "request":
                flexible = flexible_from is not None and version >= flexible_from
                frame = request_frame(key, version, flexible, body)
                add("request_frame", frame)
                if case is fixture["cases"][0]:
                    for seed in capture_seeds(struct.pack(">i", len(frame)) + frame):
                        add("capture", seed)
            else:
                add("response_body", bytes([key, version]) + body)

    blobs = [bytes.fromhex(b) for b in re.findall(r'"([0-9a-f]+)"', RECORD_FIXTURES.read_text())]
    # Each on its own, and all of them back to back as a fetch response
    # holds them; both as they are and with checksums to recompute.
    for blob in blobs + [b"".join(blobs)]:
        add("record_batch", b"\x00" + blob)
        add("record_batch", b"\x01" + blob)
        for mode in range(8):
            add("record_stream", bytes([mode]) + blob)
    # A few records fields of the golden fixtures (random bytes, but they
    # reach the error paths of the records parser).
    for name in ("ProduceRequest", "FetchResponse"):
        for case in load_json(GOLDEN / f"{name}.json")["cases"][:20]:
            for blob in re.findall(r'"records": "([A-Za-z0-9+/=]*)"', json.dumps(case["value"])):
                add("record_batch", b"\x00" + base64.b64decode(blob))

    for target in sorted(counts):
        print(f"{target}: {counts[target]} seed(s) in {corpus / target}")


if __name__ == "__main__":
    main()
