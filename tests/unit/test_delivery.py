"""Issue 26: the SDK's delivery re-sends only what the producer gave up, in order, and never an
acknowledged record twice; it waits for an unreachable bootstrap and gives up after its deadline."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError, NotEnoughReplicasError, ProducerFenced

from streams.sdk import delivery as delivery_module
from streams.sdk.delivery import Delivery
from streams.services.kafka_retry import KafkaUnavailable

RECORDS = [(b"k", str(n).encode()) for n in range(6)]


class FakeBroker:
    def __init__(self) -> None:
        self.start_failures = 0
        self.fail: dict[bytes, Exception] = {}  # value -> the error its batch fails with (once)
        self.refuse: dict[bytes, Exception] = {}  # value -> the error send() raises (once)
        self.silent = False  # appended records are never acknowledged
        self.landed: list[bytes] = []


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> FakeBroker:
    fake = FakeBroker()

    class FakeProducer:
        def __init__(self, **config: object) -> None:
            assert config["enable_idempotence"] is True and config["acks"] == "all"

        async def start(self) -> None:
            if fake.start_failures:
                fake.start_failures -= 1
                raise KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 59092)]")

        async def stop(self) -> None:
            return None

        async def send(self, topic: str, value: bytes, key: bytes) -> asyncio.Future:
            if value in fake.refuse:
                raise fake.refuse.pop(value)
            future = asyncio.get_running_loop().create_future()
            if value in fake.fail:
                future.set_exception(fake.fail.pop(value))
            elif not fake.silent:
                fake.landed.append(value)
                future.set_result(None)
            return future

    monkeypatch.setattr(delivery_module, "AIOKafkaProducer", FakeProducer)
    return fake


async def no_wait(delay: float) -> None:
    return None


def values(*numbers: int) -> list[bytes]:
    return [str(n).encode() for n in numbers]


async def test_an_unreachable_bootstrap_delays_the_first_send(broker: FakeBroker) -> None:
    broker.start_failures = 2
    lines: list[str] = []
    await Delivery("127.0.0.1:59092", 120, lines.append, sleep=no_wait).deliver("om.messages", RECORDS)
    assert broker.landed == values(0, 1, 2, 3, 4, 5)
    assert lines == ["broker 127.0.0.1:59092 unreachable, retrying in 1 s",
                     "broker 127.0.0.1:59092 unreachable, retrying in 2 s"]


async def test_only_the_records_whose_batch_failed_go_again_in_their_order(broker: FakeBroker) -> None:
    broker.fail = {b"2": NotEnoughReplicasError(), b"4": NotEnoughReplicasError()}
    await Delivery("b:1", 120, lambda _: None, sleep=no_wait).deliver("om.messages", RECORDS)
    assert broker.landed == values(0, 1, 3, 5, 2, 4)  # each exactly once


async def test_a_record_never_appended_goes_again_with_every_record_after_it(broker: FakeBroker) -> None:
    broker.refuse = {b"3": KafkaTimeoutError()}
    await Delivery("b:1", 120, lambda _: None, sleep=no_wait).deliver("om.messages", RECORDS)
    assert broker.landed == values(0, 1, 2, 3, 4, 5)


async def test_a_permanent_error_is_not_retried(broker: FakeBroker) -> None:
    broker.fail = {b"1": ProducerFenced()}
    with pytest.raises(ProducerFenced):
        await Delivery("b:1", 120, lambda _: None, sleep=no_wait).deliver("om.messages", RECORDS)
    assert broker.landed == values(0, 2, 3, 4, 5)


async def test_no_acknowledgement_within_the_deadline_ends_the_call(broker: FakeBroker,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery_module, "STALL_REPORT_S", 0.01)
    broker.silent = True
    lines: list[str] = []
    with pytest.raises(KafkaUnavailable) as raised:
        await Delivery("b:1", 0.05, lines.append, sleep=no_wait).deliver("om.messages", RECORDS[:2])
    assert "no acknowledgement" in str(raised.value)
    assert lines and all(line.startswith("broker b:1 not acknowledging (0 of 2 acknowledged)") for line in lines)
