"""Where the test suite's Kafka and ClickHouse come from: Docker containers or local processes.

``OM_TEST_BACKEND=docker`` starts the official images with testcontainers; ``local`` uses the
project's own broker script and the in-process chDB engine; ``auto`` picks docker when a Docker
engine answers. Both Kafka backends run the version pinned in deploy/local/kafka/pom.xml with
the same broker settings (deploy/local/kafka/server.properties).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from functools import lru_cache

from streams.services.kafka import CLUSTER_ID, LocalKafkaBroker, broker_properties
from streams.services.kafka_jars import kafka_version
from streams.settings import get_settings

CLICKHOUSE_IMAGE = "clickhouse/clickhouse-server:26.9"
DOCKER_PING_TIMEOUT_S = 2


@lru_cache(maxsize=1)
def chosen_backend() -> str:
    """``docker`` or ``local``; asks the Docker engine at most once per session."""
    wanted = get_settings().test_backend
    if wanted != "auto":
        return wanted
    return "docker" if _docker_answers() else "local"


def _docker_answers() -> bool:
    try:
        import docker

        return bool(docker.from_env(timeout=DOCKER_PING_TIMEOUT_S).ping())
    except Exception:  # no client library, no socket, engine down: all mean "not available"
        return False


@contextlib.contextmanager
def local_kafka() -> Iterator[str]:
    """The project's own broker (OM_DATA_DIR, OM_KAFKA_BOOTSTRAP); stopped only if we started it."""
    broker = LocalKafkaBroker.from_settings(get_settings())
    started = broker.start()
    try:
        yield broker.bootstrap
    finally:
        if started:
            broker.stop()


@contextlib.contextmanager
def docker_kafka() -> Iterator[str]:
    """The official ``apache/kafka`` image, configured by env vars from our server.properties.

    The advertised listener must be the address clients dial, so the container's port is
    published on the same free host port instead of a random one.
    """
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    port = _free_port()
    props = broker_properties(port, 9093, "/var/lib/kafka/data")
    props.update(
        {
            "listeners": f"PLAINTEXT://0.0.0.0:{port},CONTROLLER://0.0.0.0:9093",
            "controller.quorum.voters": "1@localhost:9093",
        }
    )
    container = DockerContainer(f"apache/kafka:{kafka_version()}").with_bind_ports(port, port)
    container.with_env("CLUSTER_ID", CLUSTER_ID)
    for key, value in props.items():
        container.with_env("KAFKA_" + key.upper().replace(".", "_"), value)
    container.waiting_for(LogMessageWaitStrategy("Kafka Server started").with_startup_timeout(120))
    with container:
        host = container.get_container_host_ip()
        yield f"{'127.0.0.1' if host == 'localhost' else host}:{port}"


@contextlib.contextmanager
def docker_clickhouse() -> Iterator[str]:
    """A ClickHouse server container; the DSN is http:// like production's."""
    from testcontainers.clickhouse import ClickHouseContainer

    with ClickHouseContainer(CLICKHOUSE_IMAGE) as server:
        host, port = server.get_container_host_ip(), server.get_exposed_port(8123)
        yield f"http://{server.username}:{server.password}@{host}:{port}/{server.dbname}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
