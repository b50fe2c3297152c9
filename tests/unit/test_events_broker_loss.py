"""Issue 26: ``om events tail`` (EventStream) waits for an unreachable broker to start, and a poll
that fails during an election is retried on the same consumer, so its positions are kept."""

from __future__ import annotations

import pytest
from aiokafka import TopicPartition
from aiokafka.errors import KafkaConnectionError, NotLeaderForPartitionError

from streams.sdk import events as events_module
from streams.sdk.events import EventStream


class Script:
    def __init__(self) -> None:
        self.start_failures = 2
        self.poll_failures = 1
        self.consumers: list[object] = []
        self.stopped = 0


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    shared = Script()

    class FakeConsumer:
        def __init__(self, **config: object) -> None:
            shared.consumers.append(self)

        async def start(self) -> None:
            if shared.start_failures:
                shared.start_failures -= 1
                raise KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 59092)]")

        async def stop(self) -> None:
            shared.stopped += 1

        def assign(self, partitions: list[TopicPartition]) -> None:
            return None

        async def seek_to_end(self, *partitions: TopicPartition) -> None:
            return None

        async def position(self, partition: TopicPartition) -> int:
            return 0

        async def getmany(self, timeout_ms: int) -> dict:
            if shared.poll_failures:
                shared.poll_failures -= 1
                raise NotLeaderForPartitionError()
            return {}

    async def partitions(bootstrap: str, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, 0)]

    monkeypatch.setattr(events_module, "AIOKafkaConsumer", FakeConsumer)
    monkeypatch.setattr(events_module, "topic_partitions", partitions)
    return shared


async def no_wait(delay: float) -> None:
    return None


async def test_the_stream_starts_once_the_broker_answers_and_polls_through_an_election(script: Script) -> None:
    lines: list[str] = []
    stream = EventStream("127.0.0.1:59092", "om.events", report=lines.append, sleep=no_wait)
    assert await stream.next_batch() == []  # started after two refusals, then one failed poll
    assert len(script.consumers) == 3 and script.stopped == 2  # each failed start closed its consumer
    assert lines[:2] == ["broker 127.0.0.1:59092 unreachable, retrying in 1 s",
                         "broker 127.0.0.1:59092 unreachable, retrying in 2 s"]
    assert lines[2].startswith("broker 127.0.0.1:59092 not ready (NotLeaderForPartitionError")
    await stream.stop()
