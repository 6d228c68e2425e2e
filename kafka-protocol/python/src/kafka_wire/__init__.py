"""A fake Kafka cluster for tests: ``kafka-protocol fake``, packaged.

>>> from kafka_wire import FakeCluster
>>> with FakeCluster(brokers=3, topics={"orders": 6}) as cluster:
...     print(cluster.bootstrap)
127.0.0.1:40123,127.0.0.1:40125,127.0.0.1:40127

With pytest, the fixtures ``kafka_cluster`` (one cluster per test) and
``kafka_cluster_session`` (one for the session) are there once the package
is installed; see the ``kafka_wire.pytest_plugin`` module.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from ._binary import find_kafka_protocol
from .cluster import ControlError, FakeCluster, FakeClusterError, parse_fault_counts

try:
    __version__ = version("kafka-wire")
except PackageNotFoundError:  # run from a source tree
    __version__ = "0+unknown"

__all__ = [
    "ControlError",
    "FakeCluster",
    "FakeClusterError",
    "find_kafka_protocol",
    "parse_fault_counts",
    "__version__",
]
