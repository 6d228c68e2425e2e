"""``python -m kafka_wire ARGS...`` runs the packaged ``kafka-protocol ARGS...``."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import find_kafka_protocol


def main() -> int:
    binary = find_kafka_protocol()
    if sys.platform == "win32":
        return subprocess.run([binary, *sys.argv[1:]]).returncode
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
