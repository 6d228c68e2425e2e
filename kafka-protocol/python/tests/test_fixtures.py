"""The wrapper's own behaviour: settings, control, errors, the session
fixture."""

from __future__ import annotations

import pytest

from kafka_wire import ControlError, FakeCluster, FakeClusterError, find_kafka_protocol

SESSION_BOOTSTRAPS = set()


def test_ini_settings_reach_the_function_fixture(kafka_cluster):
    assert len(kafka_cluster.bootstrap.split(",")) == 3
    assert kafka_cluster.control("leader", topic="orders", partition=5)["leader_epoch"] == 0
    with pytest.raises(ControlError, match="no such partition"):
        kafka_cluster.control("leader", topic="orders", partition=6)


@pytest.mark.kafka_cluster(brokers=2, topics=["moves:1"])
def test_control_moves_a_leader(kafka_cluster):
    before = kafka_cluster.control({"cmd": "leader", "topic": "moves", "partition": 0})
    moved = kafka_cluster.control("move-leader", topic="moves", partition=0)
    assert moved["leader"] != before["leader"]
    assert moved["leader_epoch"] == before["leader_epoch"] + 1
    with pytest.raises(ControlError) as refused:
        kafka_cluster.control("no-such-command")
    assert refused.value.message == "unknown command `no-such-command`"


def test_the_session_fixture_is_one_cluster(kafka_cluster_session):
    SESSION_BOOTSTRAPS.add(kafka_cluster_session.bootstrap)
    assert len(SESSION_BOOTSTRAPS) == 1


def test_the_session_fixture_is_one_cluster_again(kafka_cluster_session):
    SESSION_BOOTSTRAPS.add(kafka_cluster_session.bootstrap)
    assert len(SESSION_BOOTSTRAPS) == 1
    assert kafka_cluster_session.running


def test_the_clis_messages_become_exceptions():
    with pytest.raises(FakeClusterError) as error:
        FakeCluster(brokers=0).start()
    assert "the number of brokers is 1 to 64, not `0`" in error.value.message
    assert error.value.returncode == 2
    with pytest.raises(FakeClusterError, match="fault `produce:error=NO_SUCH_ERROR`"):
        FakeCluster(faults="produce:error=NO_SUCH_ERROR").start()
    with FakeCluster(brokers=1) as cluster:
        with pytest.raises(ControlError, match="fault"):
            cluster.fault("produce:error=NO_SUCH_ERROR")


def test_stop_returns_the_counts_and_the_process_is_gone():
    cluster = FakeCluster(brokers=1, faults=["metadata:delay=1ms"]).start()
    assert cluster.running
    counts = cluster.stop()
    assert set(counts) >= {"error", "delay", "drop-after-records"}
    assert not cluster.running
    assert cluster.stop() == counts


def test_the_binary_is_the_one_installed_beside_python():
    import sys
    import sysconfig

    assert find_kafka_protocol().startswith(sysconfig.get_path("scripts"))
    assert sys.prefix in find_kafka_protocol()
