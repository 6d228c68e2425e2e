"""Not collected by a plain ``pytest`` run: the paths on which a test
process ends, each run alone by the repository's package test
(tests/tests/ecosystem_packages.rs), which then checks by its process id
that the cluster did not outlive it. The id goes to $KAFKA_WIRE_PID_FILE.
"""

from __future__ import annotations

import os
import time


def _write_pid(pid: int) -> None:
    path = os.environ["KAFKA_WIRE_PID_FILE"]
    with open(path + ".tmp", "w") as f:
        f.write(str(pid))
    os.replace(path + ".tmp", path)


def test_fails(kafka_cluster):
    _write_pid(kafka_cluster.pid)
    assert False, "this test fails on purpose"


def test_waits(kafka_cluster):
    """Interrupted (SIGINT) or killed (SIGKILL) while it waits."""
    _write_pid(kafka_cluster.pid)
    time.sleep(120)
