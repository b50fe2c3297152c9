"""The local Apache Kafka broker: one KRaft node (broker + controller) as a plain JVM process.

A node of a local cluster (streams/services/kafka_cluster.py) is the same class with its own
``node_id``, the cluster's voter list and node count; the config differs only in those values.

Layout under its home directory (``<data dir>/kafka`` by default; all git-ignored)::

    lib/                 the broker's jars, resolved once from Maven Central (kafka_jars.py)
    data/                KRaft metadata and topic logs; survives restarts, formatted once
    logs/server.log      the broker's own log (rolling, size-bounded)
    broker.out           the JVM's stdout/stderr of the last start (crashes land here)
    server.properties    rendered from deploy/local/kafka/server.properties on every start
    broker.pid           the pid of the broker *we* started; `stop` kills only that pid

Starting is idempotent: a live, healthy broker recorded in ``broker.pid`` is left alone.
"""

from __future__ import annotations

import shutil
import string
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from streams.services import process
from streams.services.errors import ServiceError
from streams.services.kafka_health import is_healthy, port_accepts, wait_healthy
from streams.services.kafka_jars import DEPLOY_DIR, ensure_jars, kafka_version
from streams.services.kafka_replication import Replication
from streams.settings import Settings

# Fixed, so a data directory formatted on one run is accepted by every later run.
CLUSTER_ID = "VwglQ_oNUZOoZlRn9B2YMg"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
JVM_HEAP = "-Xmx512m"
JVM_SMALL_MACHINE = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
"""The JVM's flags for a broker that shares a small machine with the pipeline it serves (the local
broker, its cluster's nodes, the storage tool): the C1 compiler only, and the serial collector.

Measured at 32 agents on bench 8's workload (100 threads × 30 turns, three runs from a fresh start,
2 cores): with the default tiered compilation the C2 compiler took 47 % of the broker's CPU in its
first minutes (23,000 compilations, 83 s of compile time in 3 minutes) and G1's concurrent threads
another 12 %; the broker spent 4.0 → 3.2 → 2.1 ms of CPU a turn as it warmed, 74 s in all, and
25 s to start. With these flags: 1.9 → 1.4 → 1.3 ms a turn, 39 s in all, 14 s to start, and the
agents' turns ran faster (bench/RESULTS.md §8). C1's code is slower than C2's at its best, which a
dedicated broker host would reach; the production cluster (deploy/) keeps the JVM's defaults."""


@dataclass(frozen=True)
class BrokerStatus:
    pid: int | None
    healthy: bool
    bootstrap: str
    home: Path


@dataclass(frozen=True)
class LocalKafkaBroker:
    """A broker listening on 127.0.0.1:``port``, its controller on ``port + 1``; alone unless
    ``voters`` names the controllers of a ``nodes``-node cluster it belongs to."""

    home: Path
    port: int = 19092
    node_id: int = 1
    voters: str = ""
    nodes: int = 1

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalKafkaBroker:
        host = settings.kafka_bootstrap.split(",")[0].strip().rsplit(":", 1)[0]
        if host not in LOCAL_HOSTS:
            raise ServiceError(
                f"OM_KAFKA_BOOTSTRAP={settings.kafka_bootstrap} is not on this machine; `om services` only "
                "manages the local broker (unset OM_KAFKA_BOOTSTRAP or point it at 127.0.0.1:<port>)"
            )
        return cls(home=settings.data_dir / "kafka", port=settings.kafka_port)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.home / "broker.pid"

    @property
    def config_file(self) -> Path:
        return self.home / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "server.log"

    def status(self) -> BrokerStatus:
        pid = process.running_pid(self.pid_file, self._marker)
        healthy = is_healthy(self.bootstrap, timeout=3.0) if pid is not None else False
        return BrokerStatus(pid=pid, healthy=healthy, bootstrap=self.bootstrap, home=self.home)

    def start(self, console: Console | None = None, timeout: float = 120.0) -> bool:
        """Start the broker and wait until it answers; False if ours was already running."""
        deadline = time.monotonic() + timeout
        pid = self.launch(console)
        if pid is None:
            return False
        self.wait_started(pid, deadline, timeout)
        return True

    def launch(self, console: Console | None = None, deadline: float | None = None) -> int | None:
        """Spawn the JVM without waiting for it to answer; None if ours already runs and answers.

        A cluster node cannot answer before a quorum of its peers runs, so a cluster launches
        every node first and then waits (streams/services/kafka_cluster.py)."""
        pid = process.running_pid(self.pid_file, self._marker)
        if pid is not None:
            if wait_healthy(self.bootstrap, deadline or time.monotonic() + 120.0,
                            lambda: process.is_running(pid, self._marker)):
                return None
            raise ServiceError(
                f"Kafka broker pid {pid} runs but does not answer on {self.bootstrap}; see {self.log_file}, "
                "then run `om services down` and `om services up`"
            )
        if port_accepts("127.0.0.1", self.port) or port_accepts("127.0.0.1", self.port + 1):
            raise ServiceError(
                f"port {self.port} or {self.port + 1} is taken by a process `om` did not start; stop it, or "
                "choose another port with OM_KAFKA_BOOTSTRAP=127.0.0.1:<port>"
            )
        java = shutil.which("java")
        if java is None:
            raise ServiceError("Java 17+ is not installed; install it (Debian: apt-get install openjdk-17-jre-headless)")
        ensure_jars(self.home / "lib", console)
        self._render_config()
        self._format_storage(java)
        return process.spawn(self._command(java), cwd=self.home, output=self.home / "broker.out", pid_file=self.pid_file)

    def wait_started(self, pid: int, deadline: float, timeout: float) -> None:
        """Wait until the launched ``pid`` answers; stop it and raise with its output if it does not."""
        if wait_healthy(self.bootstrap, deadline, lambda: process.is_running(pid, self._marker)):
            return
        alive = process.is_running(pid, self._marker)
        process.stop(self.pid_file, self._marker)
        raise ServiceError(
            f"Kafka {'did not answer within %.0f s' % timeout if alive else 'exited while starting'}:\n"
            f"{self._output_tail()}\nSee {self.home / 'broker.out'} and {self.log_file}."
        )

    def kill(self) -> bool:
        """kill -9 of the broker recorded in the pid file (fault tests); False if none ran."""
        return process.kill(self.pid_file, self._marker)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the broker recorded in the pid file (SIGTERM, then SIGKILL); False if none ran."""
        return process.stop(self.pid_file, self._marker, timeout=timeout)

    @property
    def _marker(self) -> str:
        """What the broker's command line contains: our config path, unique per broker home."""
        return str(self.config_file)

    def _command(self, java: str) -> list[str]:
        return [
            java, JVM_HEAP, *JVM_SMALL_MACHINE, "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={DEPLOY_DIR / 'log4j2.yaml'}",
            f"-Dkafka.logs.dir={self.home / 'logs'}",
            "-cp", str(self.home / "lib" / "*"),
            "kafka.Kafka", str(self.config_file),
        ]  # fmt: skip

    def _render_config(self) -> None:
        (self.home / "logs").mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(render_properties(self.port, self.port + 1, self.home / "data", node_id=self.node_id,
                                                      voters=self.voters, nodes=self.nodes))

    def _format_storage(self, java: str) -> None:
        """Format KRaft storage on first start only; later starts reuse data/ as it is."""
        if (self.home / "data" / "meta.properties").is_file():
            return
        result = subprocess.run(
            [
                java, *JVM_SMALL_MACHINE, "-cp", str(self.home / "lib" / "*"),
                f"-Dlog4j2.configurationFile={DEPLOY_DIR / 'log4j2.yaml'}", f"-Dkafka.logs.dir={self.home / 'logs'}",
                "kafka.tools.StorageTool", "format", "--ignore-formatted",
                "-t", CLUSTER_ID, "-c", str(self.config_file),
            ],
            capture_output=True,
            text=True,
        )  # fmt: skip
        if result.returncode != 0:
            raise ServiceError(
                f"formatting Kafka storage in {self.home / 'data'} failed:\n{result.stdout}{result.stderr}\n"
                f"If that directory is from another Kafka version, remove it (data is lost) and retry."
            )

    def _output_tail(self, lines: int = 20) -> str:
        for path in (self.home / "broker.out", self.log_file):
            if path.is_file() and path.stat().st_size:
                return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return "(no output)"


def render_properties(port: int, controller_port: int, log_dir: Path | str, *, node_id: int = 1, voters: str = "",
                      nodes: int = 1) -> str:
    """The broker config from deploy/local/kafka/server.properties with its placeholders filled:
    a lone node votes for itself; replication follows the node count."""
    template = string.Template((DEPLOY_DIR / "server.properties").read_text())
    replication = Replication.for_nodes(nodes)
    return template.substitute(port=port, controller_port=controller_port, log_dir=log_dir, node_id=node_id,
                               voters=voters or f"{node_id}@127.0.0.1:{controller_port}",
                               replication=replication.factor, min_insync=replication.min_insync)


def broker_properties(port: int, controller_port: int, log_dir: Path | str, **node: Any) -> dict[str, str]:
    """The same config as key/value pairs, e.g. to configure the official Docker image by env."""
    pairs = {}
    for line in render_properties(port, controller_port, log_dir, **node).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


def describe(nodes: int = 1) -> str:
    """One line for status output: which broker distribution the local backend runs."""
    if nodes == 1:
        return f"Apache Kafka {kafka_version()} (KRaft, single node)"
    replication = Replication.for_nodes(nodes)
    return (f"Apache Kafka {kafka_version()} (KRaft, {nodes} nodes, replication {replication.factor}, "
            f"min.insync.replicas {replication.min_insync})")
