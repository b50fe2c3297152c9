"""The group leader asks for fresh metadata while a subscribed topic is missing from it
(streams/internal_topics.py), so the partial assignment it had to make is replaced within seconds."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from streams import internal_topics
from streams.internal_topics import install_assignment_guard


class Cluster:
    def __init__(self, topics: dict[str, int]) -> None:
        self.topics = topics

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.topics.get(topic)
        return set(range(n)) if n else None


class Client:
    """aiokafka's client: each forced refresh is one metadata request; the topic shows on the third."""

    def __init__(self, cluster: Cluster, appears_after: int) -> None:
        self.cluster, self.appears_after, self.refreshes = cluster, appears_after, 0

    async def force_metadata_update(self) -> bool:
        self.refreshes += 1
        if self.refreshes >= self.appears_after:
            self.cluster.topics["app-om-state-changelog"] = 4
        return True


def _app(client: Client) -> tuple[Any, list[Any]]:
    calls: list[Any] = []
    assignor = SimpleNamespace(assign=lambda cluster, members: calls.append((cluster, members)) or {"m": "a"})
    consumer = SimpleNamespace(_thread=SimpleNamespace(_ensure_consumer=lambda: SimpleNamespace(_client=client)))
    return SimpleNamespace(assignor=assignor, consumer=consumer), calls


def _members(*topics: str) -> dict[str, Any]:
    return {"m1": SimpleNamespace(subscription=list(topics)), "m2": SimpleNamespace(subscription=list(topics))}


async def test_a_missing_topic_is_asked_for_until_it_appears(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(internal_topics, "REFRESH_EVERY_S", 0.0)
    cluster = Cluster({"messages": 4})
    client = Client(cluster, appears_after=3)
    app, calls = _app(client)
    install_assignment_guard(app)
    members = _members("messages", "app-om-state-changelog")
    assert app.assignor.assign(cluster, members) == {"m": "a"}  # Faust's assignment still runs, as it is
    assert calls == [(cluster, members)]
    app.assignor.assign(cluster, members)  # a second assignment meanwhile starts no second refresher
    for _ in range(200):
        if cluster.partitions_for_topic("app-om-state-changelog"):
            break
        await asyncio.sleep(0)
    assert client.refreshes == 3
    for _ in range(5):
        await asyncio.sleep(0)
    assert client.refreshes == 3  # stopped once it appeared


async def test_a_complete_metadata_asks_for_nothing() -> None:
    cluster = Cluster({"messages": 4, "app-om-state-changelog": 4})
    client = Client(cluster, appears_after=1)
    app, calls = _app(client)
    install_assignment_guard(app)
    app.assignor.assign(cluster, _members("messages", "app-om-state-changelog"))
    await asyncio.sleep(0)
    assert client.refreshes == 0 and len(calls) == 1


async def test_the_refresh_gives_up_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(internal_topics, "REFRESH_EVERY_S", 0.0)
    monkeypatch.setattr(internal_topics, "REFRESH_FOR_S", 0.05)
    cluster = Cluster({"messages": 4})
    client = Client(cluster, appears_after=10**9)
    app, _ = _app(client)
    install_assignment_guard(app)
    app.assignor.assign(cluster, _members("messages", "gone"))
    task = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    await asyncio.wait_for(asyncio.gather(*task), timeout=5)
    assert client.refreshes > 0
