"""Replication follows the node count (streams/services/kafka_replication.py), in the broker config
the local broker and cluster render and in the topics the worker's Faust app creates."""

from __future__ import annotations

from pathlib import Path

import pytest

from processors.config import OMConfig
from streams.app import STATE_TABLE, build_app
from streams.services.kafka import broker_properties
from streams.services.kafka_cluster import LocalKafkaCluster
from streams.services.kafka_replication import Replication
from streams.settings import Settings


@pytest.mark.parametrize(("nodes", "factor", "min_insync"), [(1, 1, 1), (2, 2, 1), (3, 3, 2), (5, 3, 2)])
def test_replication_and_min_insync_follow_the_node_count(nodes: int, factor: int, min_insync: int) -> None:
    assert Replication.for_nodes(nodes) == Replication(factor, min_insync)


def test_a_majority_of_a_larger_explicit_factor_must_hold_a_write() -> None:
    assert Replication.for_factor(5) == Replication(5, 3)
    with pytest.raises(ValueError, match="at least one node"):
        Replication.for_nodes(0)


def test_the_single_broker_keeps_its_one_node_settings() -> None:
    props = broker_properties(19092, 19093, "/data")
    assert props["node.id"] == "1" and props["controller.quorum.voters"] == "1@127.0.0.1:19093"
    for key in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor",
                "default.replication.factor", "transaction.state.log.min.isr", "min.insync.replicas"):
        assert props[key] == "1", key


def test_each_cluster_node_has_its_own_id_ports_and_data_and_one_voter_list(tmp_path: Path) -> None:
    cluster = LocalKafkaCluster(home=tmp_path, base_port=39100, size=3)
    assert cluster.bootstrap == "127.0.0.1:39100,127.0.0.1:39102,127.0.0.1:39104"
    node = cluster.node(2)
    node._render_config()
    text = node.config_file.read_text()
    props = dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert props["node.id"] == "2"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:39102,CONTROLLER://127.0.0.1:39103"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:39101,2@127.0.0.1:39103,3@127.0.0.1:39105"
    assert props["log.dirs"] == str(tmp_path / "node-2" / "data")
    assert props["offsets.topic.replication.factor"] == props["transaction.state.log.replication.factor"] == "3"
    assert props["default.replication.factor"] == "3"
    assert props["transaction.state.log.min.isr"] == props["min.insync.replicas"] == "2"


def test_the_worker_app_replicates_its_changelog_as_the_cluster_does_and_waits_for_all_replicas(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, topic_prefix="rep", clickhouse_dsn="http://unused", replication=3)
    app = build_app(settings, OMConfig.from_mastra({}), "processor")
    assert app.conf.producer_acks == -1, "acks=all"
    assert app.conf.topic_replication_factor == 3
    changelog = app.tables[STATE_TABLE].changelog_topic
    assert changelog.get_topic_name() == f"rep-processor-{STATE_TABLE}-changelog"
    assert changelog.config["min.insync.replicas"] == "2"


def test_an_unresolved_replication_is_refused_before_faust_creates_anything(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="replication is unset"):
        build_app(Settings(data_dir=tmp_path, topic_prefix="rep"), OMConfig(), "llm", llm=object())
