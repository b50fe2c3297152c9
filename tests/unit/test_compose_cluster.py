"""deploy/docker-compose.cluster.yml runs the Kafka settings the local three-node cluster runs.

The image turns ``KAFKA_A_B`` into ``a.b`` (its documented rule). Every setting of the rendered
local config must appear in the compose file with the same value, except the ones listed here
with the reason they differ: topology (addresses, ids, paths: each side has its own) and a few
laptop/test-speed choices.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from streams.services.kafka_cluster import LocalKafkaCluster
from streams.settings import PROJECT_ROOT
from streams.topics import LARGE_RECORD_BYTES, Topics

COMPOSE = PROJECT_ROOT / "deploy" / "docker-compose.cluster.yml"
TOPOLOGY = {"node.id", "controller.quorum.voters", "listeners", "advertised.listeners", "log.dirs",
            "listener.security.protocol.map"}  # compose adds a host listener for clients outside Docker
LOCAL_ONLY = {
    "auto.create.topics.enable": "compose creates every topic up front (topic-init) and refuses the rest",
    "group.initial.rebalance.delay.ms": "compose waits 3 s so several workers share the first assignment",
    "offsets.topic.num.partitions": "4 locally for a fast first group; compose keeps Kafka's 50",
    "transaction.state.log.num.partitions": "4 locally for a fast first transaction; compose keeps Kafka's 50",
    "num.partitions": "auto-creation only, which compose refuses",
    "log.segment.bytes": "laptop disk footprint",
    "log.retention.hours": "laptop disk footprint",
    "num.network.threads": "sized for 2 cores",
    "num.io.threads": "sized for 2 cores",
}


def _compose_nodes() -> dict[str, dict[str, str]]:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    return {name: {key.removeprefix("KAFKA_").lower().replace("_", "."): str(value)
                   for key, value in service["environment"].items() if key.startswith("KAFKA_")}
            for name, service in services.items() if name.startswith("kafka-")}


def _local_node(tmp_path: Path, node_id: int) -> dict[str, str]:
    node = LocalKafkaCluster(home=tmp_path, base_port=39100, size=3).node(node_id)
    node._render_config()
    return dict(line.split("=", 1) for line in node.config_file.read_text().splitlines()
                if line and not line.startswith("#"))


def test_the_compose_cluster_runs_the_local_clusters_kafka_settings(tmp_path: Path) -> None:
    nodes = _compose_nodes()
    assert sorted(nodes) == ["kafka-1", "kafka-2", "kafka-3"]
    for node_id, (name, compose) in enumerate(sorted(nodes.items()), 1):
        local = _local_node(tmp_path, node_id)
        assert compose["node.id"] == local["node.id"] == str(node_id)
        assert compose["process.roles"] == local["process.roles"] == "broker,controller"
        assert len(compose["controller.quorum.voters"].split(",")) == len(local["controller.quorum.voters"].split(","))
        differ = {key: (value, compose.get(key)) for key, value in local.items()
                  if key not in TOPOLOGY and key not in LOCAL_ONLY and compose.get(key) != value}
        assert not differ, f"{name} differs from the local cluster (local, compose): {differ}"


def test_the_listed_differences_are_real_local_settings(tmp_path: Path) -> None:
    """A difference listed for a setting the local config no longer has would hide nothing."""
    local = _local_node(tmp_path, 1)
    assert set(LOCAL_ONLY) <= set(local), sorted(set(LOCAL_ONLY) - set(local))


def test_the_compose_cluster_makes_the_log_carrying_topics_as_the_worker_does() -> None:
    """topic-init creates the topics before any worker: those carrying an observation log must take the
    records the worker's fold is told fit (streams/topics.py), the others keep Kafka's default."""
    text = COMPOSE.read_text()
    [(names, size)] = re.findall(r'case "\$\$name" in ([a-z|]+)\) large="--config max\.message\.bytes=(\d+)"', text)
    large = {name.split(".")[1] for name in Topics.for_prefix("om").large()}
    assert set(names.split("|")) == large and int(size) == LARGE_RECORD_BYTES
