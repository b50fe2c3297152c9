"""A worker's start asks the brokers about its own topics only, and makes none by asking
(streams/services/kafka_topics.py); nor does an app's send (streams/sdk/delivery.py); topics made
before with another partition count stop the worker with what to do.

A metadata request without a topic list answers with every topic in the cluster; beside 3,000 other
topics a worker's start made sixteen such requests and took ~1 s longer. These tests watch every
metadata request built in the process while the worker's broker preparation runs, against the
real broker, whose ``auto.create.topics.enable`` is on (deploy/local/kafka/server.properties): a
request that may create what it asks about would create it there.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaClient
from aiokafka.errors import UnknownTopicOrPartitionError
from aiokafka.protocol.metadata import MetadataRequest

from processors.config import OMConfig
from schemas.messages import ChatMessage, TextPart
from streams.app import build_app
from streams.internal_topics import internal_topics
from streams.sdk import OMClient
from streams.sdk.events import topic_partitions
from streams.harness.workers import WorkerProcess
from streams.services.errors import ServiceError
from streams.services.kafka_topics import PartitionsMismatch, create_topics, delete_topics, metadata
from streams.settings import Settings
from streams.topics import Topics
from streams.worker import ensure_topics, prepare_broker

pytestmark = pytest.mark.integration


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[list[str] | None, bool | None]]]:
    """Each metadata request built in this process: its topics (None: every topic) and whether it
    lets the broker create them."""
    seen: list[tuple[list[str] | None, bool | None]] = []
    build = MetadataRequest.__init__

    def recording(self: MetadataRequest, topics: list[str] | None = None,
                  allow_auto_topic_creation: bool | None = None) -> None:
        seen.append((None if topics is None else list(topics), allow_auto_topic_creation))
        build(self, topics, allow_auto_topic_creation)

    monkeypatch.setattr(MetadataRequest, "__init__", recording)
    yield seen


async def _topics_of(bootstrap: str, names: list[str]) -> dict[str, int]:
    """Each of ``names`` the cluster has, with its error code (0: there)."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        return {t["topic"]: t["error_code"] for t in (await metadata(client, names)).to_object()["topics"]}
    finally:
        await client.close()


@pytest.mark.parametrize("role", ["all", "llm"])
async def test_preparing_the_broker_asks_for_the_workers_topics_only(kafka_bootstrap: str, asked, role: str) -> None:
    prefix = f"md{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=2)
    names = [*Topics.for_prefix(prefix).all(), *internal_topics(prefix, role)]  # type: ignore[arg-type]
    try:
        for start in ("first start", "restart"):
            asked.clear()
            await prepare_broker(settings, role)  # type: ignore[arg-type]
            assert asked, "the preparation asks for metadata"
            everything = [n for n, (topics, _) in enumerate(asked) if topics is None]
            assert not everything, f"{start}: requests {everything} of {len(asked)} asked for every topic"
            assert all(create is False for topics, create in asked if topics), \
                f"{start}: a request may create the topics it names: {asked}"
            assert all(not topics or set(topics) <= set(names) for topics, _ in asked), \
                f"{start}: asked about topics not the worker's: {asked}"
        assert set((await _topics_of(kafka_bootstrap, names)).values()) == {0}, "every topic made"
    finally:
        await delete_topics(kafka_bootstrap, names)


async def _until_a_control_is_auto_created(bootstrap: str, client: AIOKafkaClient) -> None:
    """Ask for a missing topic as aiokafka asks by default, which this broker answers by creating it
    (in the background), until it exists: a topic asked about that way before would exist by then."""
    control = f"md-control.{uuid.uuid4().hex[:12]}"
    deadline = time.monotonic() + 30
    try:
        while (await _topics_of(bootstrap, [control])).get(control) != 0:
            await client.send(client.get_random_node(), MetadataRequest([control]))
            assert time.monotonic() < deadline, "the broker never auto-created the control topic"
            await asyncio.sleep(0.05)
    finally:
        await delete_topics(bootstrap, [control])


async def test_asking_about_a_missing_topic_does_not_create_it(kafka_bootstrap: str) -> None:
    ours = f"md-missing.{uuid.uuid4().hex[:12]}"
    client = AIOKafkaClient(bootstrap_servers=kafka_bootstrap)
    await client.bootstrap()
    try:
        assert (await metadata(client, [ours])).to_object()["topics"][0]["error_code"] \
            == UnknownTopicOrPartitionError.errno
        with pytest.raises(LookupError, match="does not exist"):  # the SDK's question about it
            await topic_partitions(kafka_bootstrap, ours)
        await _until_a_control_is_auto_created(kafka_bootstrap, client)
        assert await _topics_of(kafka_bootstrap, [ours]) == {ours: UnknownTopicOrPartitionError.errno}
    finally:
        await client.close()
        await delete_topics(kafka_bootstrap, [ours])


async def test_an_app_sending_before_any_worker_ran_is_told_to_start_one_and_makes_no_topic(
        kafka_bootstrap: str) -> None:
    """Made by the producer's first send, the messages topic would have the broker's default
    partitions, and the worker would keep them (it leaves an existing topic as it is)."""
    prefix = f"md{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=4)
    messages = Topics.for_prefix(prefix).messages
    message = ChatMessage(id="m1", thread_id="t1", resource_id="r1", role="user", created_at=1_767_600_000_000,
                          parts=[TextPart(text="hello")])
    client = AIOKafkaClient(bootstrap_servers=kafka_bootstrap)
    await client.bootstrap()
    try:
        async with OMClient(settings, scope="thread") as app:
            with pytest.raises(UnknownTopicOrPartitionError, match=r"start a worker first \(om run\)"):
                await app.send(message)
        await _until_a_control_is_auto_created(kafka_bootstrap, client)
        assert await _topics_of(kafka_bootstrap, [messages]) == {messages: UnknownTopicOrPartitionError.errno}
        await prepare_broker(settings)  # the worker's start makes it, with the configured partitions
        async with OMClient(settings, scope="thread") as app:
            await app.send(message)
        assert len((await metadata(client, [messages])).to_object()["topics"][0]["partitions"]) == 4
    finally:
        await client.close()
        await delete_topics(kafka_bootstrap, [], prefixes=(f"{prefix}.", f"{prefix}-"))


async def test_topics_made_with_another_partition_count_stop_the_worker_with_what_to_do(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    """A key's messages, results and state must share a partition number: a messages topic made
    with one partition (by a broker's auto-creation, or another OM_PARTITIONS) beside a changelog of
    two would look a result's key up in the wrong partition's state."""
    prefix = f"md{uuid.uuid4().hex[:8]}"
    messages, changelog = Topics.for_prefix(prefix).messages, internal_topics(prefix, "all")[0]
    try:
        await create_topics(kafka_bootstrap, [messages], partitions=1)
        with pytest.raises(PartitionsMismatch, match=rf"OM_PARTITIONS=2 \({re.escape(messages)} has 1\)"):
            await prepare_broker(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=2))
        await delete_topics(kafka_bootstrap, [messages])
        await create_topics(kafka_bootstrap, [changelog], partitions=3)  # the state's topic, another count
        with pytest.raises(PartitionsMismatch, match=rf"\({re.escape(changelog)} has 3\)"):
            await prepare_broker(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=2))
        worker = WorkerProcess(kafka_bootstrap, prefix, {}, tmp_path)
        worker.partitions = 2
        with pytest.raises(ServiceError, match="exited with 1") as exited:
            worker.start()
        log = Path(str(exited.value).rsplit("its log is ", 1)[1]).read_text()
        assert log.strip().splitlines()[-1].startswith("om: topics made before have another partition count"), log
    finally:
        await delete_topics(kafka_bootstrap, [], prefixes=(f"{prefix}.", f"{prefix}-"))


async def test_a_tool_that_only_sends_takes_the_topics_as_a_worker_made_them(kafka_bootstrap: str) -> None:
    """``om replay`` makes the topics it finds missing (with its own OM_PARTITIONS) and sends into
    those a worker made, whatever their count: only a worker reads them co-partitioned."""
    prefix = f"md{uuid.uuid4().hex[:8]}"
    try:
        await prepare_broker(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=2))
        await ensure_topics(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=4))
        with pytest.raises(PartitionsMismatch):
            await ensure_topics(Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, partitions=4), "all")
    finally:
        await delete_topics(kafka_bootstrap, [], prefixes=(f"{prefix}.", f"{prefix}-"))


async def test_the_workers_faust_producer_declares_a_topic_without_asking_for_every_topic(
        kafka_bootstrap: str, tmp_path: Path, asked) -> None:
    """Faust forces a metadata update on its producer after each topic it declares
    (streams/declared_topics.py): made by the worker's app, against the broker, it names the topic."""
    prefix = f"md{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.declared"
    settings = Settings(kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, data_dir=tmp_path, replication=1,
                        clickhouse_dsn="http://unused")
    producer = build_app(settings, OMConfig.from_mastra({}), "processor").producer
    await producer.start()
    try:
        asked.clear()
        await producer.create_topic(topic, 2, 1)
        assert (await _topics_of(kafka_bootstrap, [topic])) == {topic: 0}, "declared"
        assert asked and all(topics is not None for topics, _ in asked), f"asked for every topic: {asked}"
    finally:
        await producer.stop()
        await delete_topics(kafka_bootstrap, [topic])
