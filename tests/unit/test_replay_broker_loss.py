"""Issue 26: a replay that ends while a batch is in flight (the broker stayed away past the deadline)
keeps its checkpoint at the last acknowledged batch; run again, it loses nothing, and the only
messages produced twice are the unacknowledged batch's (the same ids: the pipeline keeps one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiokafka.errors import NodeNotReadyError

from processors.tokens import get_counter
from schemas.messages import ChatMessage
from streams.replay.checkpoint import CheckpointFile
from streams.replay.mastra_sources import MastraSQLiteSource
from streams.replay.runner import ReplayOptions, replay
from streams.services.kafka_retry import KafkaUnavailable
from streams.topics import Topics
from tests.mastra_store import sample_store


class FlakySender:
    """Lands the first half of batch ``fail_on`` (0-based), then the broker is gone for good."""

    def __init__(self, fail_on: int | None) -> None:
        self.topics = Topics.for_prefix("unit")
        self.landed: list[str] = []
        self.calls = 0
        self.fail_on = fail_on

    async def send_many(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        call, self.calls = self.calls, self.calls + 1
        if call == self.fail_on:
            self.landed.extend(m.id for m in messages[: len(messages) // 2])
            raise KafkaUnavailable("127.0.0.1:59092", 120, NodeNotReadyError())
        self.landed.extend(m.id for m in messages)
        return messages


async def test_a_replay_ended_by_a_broker_loss_resumes_without_losing_a_message(tmp_path: Path) -> None:
    source = MastraSQLiteSource(sample_store(tmp_path / "m.db", threads=3, per_thread=7))
    all_ids = [m.id for m in source.messages()]
    checkpoints, counter = CheckpointFile(tmp_path / "cp.json"), get_counter()
    sender = FlakySender(fail_on=2)
    with pytest.raises(KafkaUnavailable):
        await replay(source, sender, checkpoints, counter, ReplayOptions(batch=4))  # type: ignore[arg-type]
    key = f"{sender.topics.messages}|{source.identity}"
    assert checkpoints.load(key, source.fingerprint()).position == 8  # two acknowledged batches, not ten
    sender.fail_on = None
    resumed = await replay(source, sender, checkpoints, counter, ReplayOptions(batch=4))  # type: ignore[arg-type]
    assert (resumed.resumed_from, resumed.completed) == (8, True)
    assert set(sender.landed) == set(all_ids)  # nothing lost
    repeated = sorted(i for i in set(sender.landed) if sender.landed.count(i) > 1)
    assert repeated == sorted(all_ids[8:10])  # only the half of the batch in flight, same ids
