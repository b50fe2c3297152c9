"""A service starting while the broker is briefly away waits for it; other failures end it at once."""

from __future__ import annotations

import pytest
from aiokafka.errors import KafkaConnectionError, UnrecognizedBrokerVersion

from streams.services.kafka_health import start_when_reachable


def failing(times: int, error: Exception) -> tuple[list[int], object]:
    calls: list[int] = []

    async def start() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error
        return "started"

    return calls, start


async def test_it_retries_until_the_broker_answers() -> None:
    calls, start = failing(2, KafkaConnectionError("Unable to bootstrap"))
    assert await start_when_reachable(start, "127.0.0.1:1", "sink") == "started"
    assert len(calls) == 3


async def test_it_gives_up_after_the_deadline_with_the_connection_error() -> None:
    calls, start = failing(100, KafkaConnectionError("Unable to bootstrap"))
    with pytest.raises(KafkaConnectionError):
        await start_when_reachable(start, "127.0.0.1:1", "sink", give_up_after_s=0.5)
    assert 1 < len(calls) < 5


async def test_errors_other_than_an_unreachable_broker_are_not_retried() -> None:
    calls, start = failing(1, UnrecognizedBrokerVersion())
    with pytest.raises(UnrecognizedBrokerVersion):
        await start_when_reachable(start, "127.0.0.1:1", "sink")
    assert len(calls) == 1
