"""Issue 26: which Kafka errors a tool rides through, with what backoff, and how it finally gives up."""

from __future__ import annotations

import asyncio
import random

import pytest
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    NodeNotReadyError,
    NotEnoughReplicasError,
    NotLeaderForPartitionError,
    ProducerFenced,
    RequestTimedOutError,
    UnknownTopicOrPartitionError,
)

from streams.services.kafka_retry import KAFKA_BACKOFF, Deadline, KafkaUnavailable, is_transient, ride_through

BOOTSTRAP = "127.0.0.1:59092"


class FakeTime:
    """A clock that only sleeping advances, and the delays slept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.slept.append(delay)
        self.now += delay


def failing(errors: list[Exception]):
    calls = []

    async def attempt() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return "sent"

    return calls, attempt


@pytest.mark.parametrize("error", [KafkaConnectionError("Unable to bootstrap"), NodeNotReadyError(),
                                   NotLeaderForPartitionError(), RequestTimedOutError(), NotEnoughReplicasError(),
                                   KafkaTimeoutError(), ConnectionRefusedError(), asyncio.TimeoutError()])
def test_broker_loss_and_elections_are_transient(error: Exception) -> None:
    assert is_transient(error)


@pytest.mark.parametrize("error", [UnknownTopicOrPartitionError(), ProducerFenced(), ValueError("bad input")])
def test_missing_topics_fencing_and_bugs_are_not(error: Exception) -> None:
    assert not is_transient(error)


async def test_it_retries_with_growing_jittered_bounded_delays_and_says_so() -> None:
    time = FakeTime()
    lines: list[str] = []
    calls, attempt = failing([KafkaConnectionError("Unable to bootstrap")] * 6 + [NodeNotReadyError()])
    result = await ride_through(attempt, bootstrap=BOOTSTRAP, deadline=Deadline(120, time.clock), report=lines.append,
                                rng=random.Random(7), sleep=time.sleep)
    assert result == "sent" and len(calls) == 8
    nominal = [min(KAFKA_BACKOFF.max_delay, 2**n) for n in range(7)]  # 1, 2, 4, 8, 10, 10, 10
    for slept, expected in zip(time.slept, nominal, strict=True):
        assert expected * 0.8 <= slept <= expected * 1.2
    assert len(set(time.slept[4:])) == 3  # jittered: the capped delays differ
    assert lines[0] == f"broker {BOOTSTRAP} unreachable, retrying in 1 s"
    assert lines[-1].startswith(f"broker {BOOTSTRAP} not ready (NodeNotReadyError")


async def test_it_gives_up_at_the_deadline_with_one_readable_line() -> None:
    time = FakeTime()
    _calls, attempt = failing([NotEnoughReplicasError()] * 1000)
    with pytest.raises(KafkaUnavailable) as raised:
        await ride_through(attempt, bootstrap=BOOTSTRAP, deadline=Deadline(30, time.clock), report=lambda _: None,
                           sleep=time.sleep)
    assert time.now == pytest.approx(30)  # the last wait is cut to what was left
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"Kafka at {BOOTSTRAP} still failing after 30 s")
    assert "NotEnoughReplicasError" in message and "run the same command again" in message
    assert isinstance(raised.value.last, NotEnoughReplicasError)


async def test_a_permanent_error_is_raised_at_once() -> None:
    time = FakeTime()
    calls, attempt = failing([UnknownTopicOrPartitionError()])
    with pytest.raises(UnknownTopicOrPartitionError):
        await ride_through(attempt, bootstrap=BOOTSTRAP, deadline=Deadline(30, time.clock), report=lambda _: None,
                           sleep=time.sleep)
    assert len(calls) == 1 and time.slept == []


def test_the_deadline_counts_from_the_first_failure_and_restarts_after_progress() -> None:
    time = FakeTime()
    deadline = Deadline(10, time.clock)
    time.now = 100
    assert deadline.remaining() == 10
    deadline.start()
    time.now = 104
    deadline.start()  # a second failure does not move the start
    assert deadline.remaining() == 6 and deadline.waited() == 4
    deadline.reset()
    assert deadline.remaining() == 10
