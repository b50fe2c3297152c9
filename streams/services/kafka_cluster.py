"""A local Kafka cluster: N KRaft nodes (each broker + controller) as N plain JVM processes.

The scale-out shape on one machine, for trying it by hand and for the cluster fault tests. Each
node is a :class:`LocalKafkaBroker` with its own ``node.id``, data dir and loopback ports; all
share one ``controller.quorum.voters`` list and the jars the single broker resolved. Node ``i``
(1-based) listens on ``base + 2(i-1)`` and its controller on the port after, so three nodes from
base 39100 take 39100–39105. Replication and ``min.insync.replicas`` follow the node count
(streams/services/kafka_replication.py).

Layout: ``<data dir>/kafka-cluster/node-<i>/`` as a single broker's home (its ``lib`` links to
``<data dir>/kafka/lib``). The single broker's data is never touched: switching a data dir
between one and three voters would not be accepted by KRaft.

Starting launches every node before waiting (a node answers only once a quorum runs), then waits
until every node answers and the metadata lists all of them.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from aiokafka import AIOKafkaClient
from aiokafka.errors import KafkaError
from rich.console import Console

from streams.services.errors import ServiceError
from streams.services.kafka import LocalKafkaBroker
from streams.services.kafka_jars import ensure_jars
from streams.settings import Settings


@dataclass(frozen=True)
class LocalKafkaCluster:
    home: Path
    base_port: int
    size: int = 3
    lib: Path | None = None  # the jars; None: the single broker's beside home (<data dir>/kafka/lib)

    @classmethod
    def from_settings(cls, settings: Settings, size: int | None = None) -> LocalKafkaCluster:
        """``size`` None: as many nodes as were started here before (none: 3)."""
        LocalKafkaBroker.from_settings(settings)  # the same refusal of a non-local bootstrap
        home = settings.data_dir / "kafka-cluster"
        known = len(list(home.glob("node-*/server.properties"))) if home.is_dir() else 0
        return cls(home=home, base_port=settings.kafka_port, size=size or known or 3)

    @property
    def nodes(self) -> list[LocalKafkaBroker]:
        voters = ",".join(f"{i}@127.0.0.1:{self._port(i) + 1}" for i in range(1, self.size + 1))
        return [LocalKafkaBroker(home=self.home / f"node-{i}", port=self._port(i), node_id=i, voters=voters,
                                 nodes=self.size) for i in range(1, self.size + 1)]

    def _port(self, node_id: int) -> int:
        return self.base_port + 2 * (node_id - 1)

    def node(self, node_id: int) -> LocalKafkaBroker:
        return self.nodes[node_id - 1]

    @property
    def bootstrap(self) -> str:
        """Every node's address: a client reaches the cluster while any one of them is up."""
        return ",".join(node.bootstrap for node in self.nodes)

    def start(self, console: Console | None = None, timeout: float = 180.0) -> bool:
        """Start every node not yet running and wait for the whole cluster; False if all ran."""
        deadline = time.monotonic() + timeout
        shared_lib = ensure_jars(self.lib or self.home.parent / "kafka" / "lib", console)
        launched: list[tuple[LocalKafkaBroker, int]] = []
        try:
            for node in self.nodes:
                node.home.mkdir(parents=True, exist_ok=True)
                if not (node.home / "lib").exists():
                    (node.home / "lib").symlink_to(shared_lib)
                if node.status().pid is None:
                    pid = node.launch(console, deadline)
                    assert pid is not None
                    launched.append((node, pid))
            for node, pid in launched:
                node.wait_started(pid, deadline, timeout)
            self.wait_all_registered(deadline)
        except BaseException:
            for node, _ in launched:
                node.stop()
            raise
        return bool(launched)

    def wait_all_registered(self, deadline: float) -> None:
        """Until one node's metadata lists every node: only then can topics get all their replicas."""
        while True:
            brokers = asyncio.run(_registered(self.bootstrap))
            if brokers >= self.size:
                return
            if time.monotonic() > deadline:
                raise ServiceError(f"only {brokers} of {self.size} Kafka nodes registered in time; see "
                                   f"{self.home}/node-*/logs/server.log")
            time.sleep(0.2)

    def stop(self, timeout: float = 30.0) -> list[int]:
        """Stop every node we started, all at once (one by one, the last ones would wait for a
        quorum that is gone); the ids of those that ran."""
        with ThreadPoolExecutor(max_workers=self.size) as pool:
            stopped = list(pool.map(lambda node: node.stop(timeout), self.nodes))
        return [node.node_id for node, ran in zip(self.nodes, stopped) if ran]


async def _registered(bootstrap: str) -> int:
    client = AIOKafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        await asyncio.wait_for(client.bootstrap(), 5.0)
        return len(client.cluster.brokers())
    except (TimeoutError, KafkaError, OSError):
        return 0
    finally:
        await client.close()

