"""streams/declared_topics.py: the producer's client tracks a topic before Faust declares it, so the
metadata update Faust forces after the declaration asks for the tracked topics, not every topic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faust.transport.drivers import aiokafka as faust_aiokafka

from processors.config import OMConfig
from streams.app import build_app
from streams.declared_topics import DeclaredTopicsTracked
from streams.settings import Settings


class FakeClient:
    """aiokafka's client as far as the declaration goes: the topics it tracks, and each forced update's."""

    def __init__(self) -> None:
        self.topics: set[str] = set()
        self.updates: list[set[str]] = []

    def add_topic(self, topic: str) -> None:
        self.topics.add(topic)

    def force_metadata_update(self) -> None:
        self.updates.append(set(self.topics))  # an empty set would ask for every topic in the cluster


async def test_the_forced_update_after_a_declaration_names_the_declared_topics(monkeypatch) -> None:
    client = FakeClient()

    async def faust_declares(self: Any, topic: str, *args: Any, **kwargs: Any) -> None:
        self._ensure_producer().client.force_metadata_update()  # what Faust does once the topic exists

    monkeypatch.setattr(faust_aiokafka.Producer, "create_topic", faust_declares)
    producer = object.__new__(DeclaredTopicsTracked)
    producer._producer = type("AIOKafkaProducer", (), {"client": client})()
    await producer.create_topic("app-om-state-changelog", 2, 1)
    await producer.create_topic("app-__assignor-__leader", 1, 1)
    assert client.updates == [{"app-om-state-changelog"}, {"app-om-state-changelog", "app-__assignor-__leader"}]


def test_the_workers_producer_is_built_with_it(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, topic_prefix="dt", clickhouse_dsn="http://unused", replication=1)
    app = build_app(settings, OMConfig.from_mastra({}), "processor")
    assert issubclass(app.transport.Producer, DeclaredTopicsTracked)
