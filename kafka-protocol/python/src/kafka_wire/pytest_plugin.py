"""pytest fixtures over :class:`kafka_wire.FakeCluster` (entry point
``pytest11``, loaded when the package is installed).

- ``kafka_cluster``: a cluster for each test, stopped after it.
- ``kafka_cluster_session``: one cluster for the whole session.

Both take their settings from ini options (``pytest.ini``, ``[tool.pytest.ini_options]``
in ``pyproject.toml``, ...)::

    [pytest]
    kafka_wire_brokers = 1
    kafka_wire_topics =
        orders:6
        payments:3
    kafka_wire_faults = every=500ms:move-leaders
    kafka_wire_seed = 7
    kafka_wire_sasl = PLAIN:alice:secret
    kafka_wire_args = --max-bytes 100000000

and ``kafka_cluster`` also from a marker on the test, its class or its
module, whose settings replace the ini's::

    @pytest.mark.kafka_cluster(brokers=1, topics={"orders": 6},
                               faults=["produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.1"], seed=7)
    def test_orders(kafka_cluster): ...

The marker takes every keyword argument of :class:`kafka_wire.FakeCluster`.
A cluster stops on every path: after its test (or session) passes or
fails, on an interrupt, and when the test process dies, since the
cluster's process stops when the pipe from this one ends.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

import pytest

from .cluster import FakeCluster

_MARKER = "kafka_cluster"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("kafka_wire_brokers", "kafka_wire fixtures: brokers of each cluster (default 3)")
    parser.addini(
        "kafka_wire_topics", "kafka_wire fixtures: seed topics, NAME:PARTITIONS, one a line", type="linelist"
    )
    parser.addini(
        "kafka_wire_faults", "kafka_wire fixtures: --fault specs applied from the start, one a line", type="linelist"
    )
    parser.addini("kafka_wire_seed", "kafka_wire fixtures: the seed of the faults' random choices")
    parser.addini(
        "kafka_wire_sasl", "kafka_wire fixtures: SASL users MECHANISM:USER:PASSWORD, one a line", type="linelist"
    )
    parser.addini("kafka_wire_args", "kafka_wire fixtures: more arguments of kafka-protocol fake", type="args")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(brokers=3, topics=None, faults=None, seed=None, sasl=None, **settings): "
        "the settings of this test's kafka_cluster (keyword arguments of kafka_wire.FakeCluster)",
    )


def _ini_settings(config: pytest.Config) -> Dict[str, Any]:
    """The fixtures' settings from the ini options that are set."""
    settings: Dict[str, Any] = {}
    brokers = config.getini("kafka_wire_brokers")
    if brokers:
        try:
            settings["brokers"] = int(brokers)
        except ValueError:
            raise pytest.UsageError(f"kafka_wire_brokers = {brokers!r} is not a number") from None
    seed = config.getini("kafka_wire_seed")
    if seed:
        try:
            settings["seed"] = int(seed)
        except ValueError:
            raise pytest.UsageError(f"kafka_wire_seed = {seed!r} is not a number") from None
    for key in ("topics", "faults", "sasl"):
        lines = config.getini(f"kafka_wire_{key}")
        if lines:
            settings[key] = list(lines)
    args = config.getini("kafka_wire_args")
    if args:
        settings["args"] = list(args)
    return settings


def _started(settings: Dict[str, Any]) -> FakeCluster:
    return FakeCluster(**settings).start()


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    """A fake Kafka cluster for this test, stopped after it. Set by the
    ``kafka_cluster`` marker, then the ``kafka_wire_*`` ini options."""
    settings = _ini_settings(request.config)
    marker = request.node.get_closest_marker(_MARKER)
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{_MARKER} takes keyword arguments only")
        settings.update(marker.kwargs)
    cluster = _started(settings)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kafka_cluster_session(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    """One fake Kafka cluster for the whole session, set by the
    ``kafka_wire_*`` ini options."""
    cluster = _started(_ini_settings(request.config))
    try:
        yield cluster
    finally:
        cluster.stop()
