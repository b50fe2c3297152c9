"""One local three-node Kafka cluster for every cluster test of the session, started and stopped
by the project's own code (streams/services/kafka_cluster.py), in a session temp directory with
the jars the single broker resolved. Tests that break a node bring it back before they end, so
the next test finds all three.

Ports: ``OM_TEST_CLUSTER_PORT`` (six consecutive loopback ports from there), else the first free
run of six. The ``fault`` record is the fault suite's (tests/faults/conftest.py).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator

import pytest

from streams.services.kafka_cluster import LocalKafkaCluster
from streams.settings import get_settings
from tests.faults.conftest import fault, pytest_terminal_summary  # noqa: F401 - the same record and summary

NODES = 3
STARTUP: dict[str, float] = {}


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafkaCluster]:
    base = int(os.environ.get("OM_TEST_CLUSTER_PORT", "0")) or _free_run(2 * NODES)
    cluster = LocalKafkaCluster(home=tmp_path_factory.mktemp("kafka-cluster"), base_port=base, size=NODES,
                                lib=get_settings().data_dir / "kafka" / "lib")
    began = time.monotonic()
    cluster.start()
    STARTUP["seconds"] = time.monotonic() - began
    try:
        yield cluster
    finally:
        cluster.stop()


def _free_run(length: int) -> int:
    """A port p with p .. p + length - 1 all free on 127.0.0.1."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            start = probe.getsockname()[1]
        if start + length >= 65535:
            continue
        held = []
        try:
            for port in range(start, start + length):
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return start
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise RuntimeError(f"no {length} consecutive free ports on 127.0.0.1")
