"""Issue 26: the SDK's delivery re-sends only what the producer gave up, in order, and never an
acknowledged record twice; it waits for an unreachable bootstrap and gives up after its deadline.
Issue 19: a call alone sends closed batches (no linger), a call beside others sends through ``send``.
Each rule is checked on both paths: ``company`` holds another call of the same client in flight."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError, NotEnoughReplicasError, ProducerFenced

from aiokafka.partitioner import DefaultPartitioner

from streams.sdk import delivery as delivery_module
from streams.sdk.delivery import Delivery
from streams.services.kafka_retry import KafkaUnavailable

RECORDS = [(b"k", str(n).encode()) for n in range(6)]
BATCH_CAPACITY = 2  # records a fake closed batch takes
PARTITIONS = 12
HELD = "om.held"  # the company call's topic: its records are acknowledged only once released


class FakeBatch:
    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes]] = []
        self.closed = False

    def append(self, *, timestamp: None, key: bytes, value: bytes) -> object | None:
        if self.closed or len(self.records) >= BATCH_CAPACITY:
            return None
        self.records.append((key, value))
        return object()

    def close(self) -> None:
        self.closed = True


class FakeBroker:
    def __init__(self) -> None:
        self.start_failures = 0
        self.fail: dict[bytes, Exception] = {}  # value -> the error its batch fails with (once)
        self.refuse: dict[bytes, Exception] = {}  # value -> the error send() raises (once)
        self.silent = False  # appended records are never acknowledged
        self.landed: list[bytes] = []
        self.partitions: dict[bytes, int] = {}  # value -> the partition its closed batch went to
        self.ways: list[str] = []  # "send" or "batch" per append, in order (the held call's left out)
        self.held: list[asyncio.Future] = []

    def outcome(self, values: list[bytes]) -> asyncio.Future:
        """A future for records acknowledged together: failed if one of them is set to fail."""
        future = asyncio.get_running_loop().create_future()
        failing = [self.fail.pop(value) for value in values if value in self.fail]
        if failing:
            future.set_exception(failing[0])
        elif not self.silent:
            self.landed.extend(values)
            future.set_result(None)
        return future


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> FakeBroker:
    fake = FakeBroker()

    class FakeCluster:  # what the producer's client knows: every topic exists
        def partitions_for_topic(self, topic: str) -> set[int]:
            return set(range(PARTITIONS))

    class FakeProducer:
        def __init__(self, **config: object) -> None:
            assert config["enable_idempotence"] is True and config["acks"] == "all"
            self.client = type("AIOKafkaClient", (), {"cluster": FakeCluster()})()

        async def start(self) -> None:
            if fake.start_failures:
                fake.start_failures -= 1
                raise KafkaConnectionError("Unable to bootstrap from [('127.0.0.1', 59092)]")

        async def stop(self) -> None:
            return None

        async def send(self, topic: str, value: bytes, key: bytes) -> asyncio.Future:
            if topic == HELD:
                fake.held.append(asyncio.get_running_loop().create_future())
                return fake.held[-1]
            fake.ways.append("send")
            if value in fake.refuse:
                raise fake.refuse.pop(value)
            return fake.outcome([value])

        async def partitions_for(self, topic: str) -> set[int]:
            return set(range(PARTITIONS))

        def create_batch(self) -> FakeBatch:
            return FakeBatch()

        async def send_batch(self, batch: FakeBatch, topic: str, *, partition: int) -> asyncio.Future:
            assert batch.closed, "a batch must be closed before it is queued, or it lingers"
            if topic == HELD:
                fake.held.append(asyncio.get_running_loop().create_future())
                return fake.held[-1]
            fake.ways.append("batch")
            batch_values = [value for _, value in batch.records]
            refused = [value for value in batch_values if value in fake.refuse]
            if refused:
                raise fake.refuse.pop(refused[0])
            fake.partitions.update((value, partition) for value in batch_values)
            return fake.outcome(batch_values)

    monkeypatch.setattr(delivery_module, "AIOKafkaProducer", FakeProducer)
    return fake


async def no_wait(delay: float) -> None:
    return None


async def deliver(broker: FakeBroker, delivery: Delivery, records: list[tuple[bytes, bytes]], company: bool) -> None:
    """``delivery.deliver(records)``, alone or while another call of the same client waits for its acks."""
    if not company:
        return await delivery.deliver("om.messages", records)
    other = asyncio.ensure_future(delivery.deliver(HELD, [(b"h", b"h")]))
    while not broker.held:
        await asyncio.sleep(0)
    try:
        await delivery.deliver("om.messages", records)
    finally:
        for future in broker.held:
            future.set_result(None)
        await other


def values(*numbers: int) -> list[bytes]:
    return [str(n).encode() for n in numbers]


async def test_an_unreachable_bootstrap_delays_the_first_send(broker: FakeBroker) -> None:
    broker.start_failures = 2
    lines: list[str] = []
    await Delivery("127.0.0.1:59092", 120, lines.append, sleep=no_wait).deliver("om.messages", RECORDS)
    assert broker.landed == values(0, 1, 2, 3, 4, 5)
    assert lines == ["broker 127.0.0.1:59092 unreachable, retrying in 1 s",
                     "broker 127.0.0.1:59092 unreachable, retrying in 2 s"]


@pytest.mark.parametrize("company", [False, True])
async def test_only_the_records_whose_batch_failed_go_again_in_their_order(broker: FakeBroker, company: bool) -> None:
    broker.fail = {b"2": NotEnoughReplicasError(), b"4": NotEnoughReplicasError()}
    await deliver(broker, Delivery("b:1", 120, lambda _: None, sleep=no_wait), RECORDS, company)
    # alone, records are acknowledged by closed batch ([0 1] [2 3] [4 5]); beside others, one by one
    assert broker.landed == (values(0, 1, 3, 5, 2, 4) if company else values(0, 1, 2, 3, 4, 5))  # each once


@pytest.mark.parametrize("company", [False, True])
async def test_a_record_never_appended_goes_again_with_every_record_after_it(broker: FakeBroker,
                                                                             company: bool) -> None:
    broker.refuse = {b"3": KafkaTimeoutError()}
    await deliver(broker, Delivery("b:1", 120, lambda _: None, sleep=no_wait), RECORDS, company)
    assert broker.landed == values(0, 1, 2, 3, 4, 5)


@pytest.mark.parametrize("company", [False, True])
async def test_a_permanent_error_is_not_retried(broker: FakeBroker, company: bool) -> None:
    broker.fail = {b"1": ProducerFenced()}
    with pytest.raises(ProducerFenced):
        await deliver(broker, Delivery("b:1", 120, lambda _: None, sleep=no_wait), RECORDS, company)
    assert broker.landed == (values(0, 2, 3, 4, 5) if company else values(2, 3, 4, 5))


async def test_a_call_alone_sends_closed_batches_and_one_beside_others_joins_the_open_ones(
        broker: FakeBroker) -> None:
    delivery = Delivery("b:1", 120, lambda _: None, sleep=no_wait)
    await deliver(broker, delivery, RECORDS, company=False)
    assert broker.ways == ["batch"] * 3
    await deliver(broker, delivery, RECORDS[:2], company=True)
    assert broker.ways == ["batch"] * 3 + ["send"] * 2
    await deliver(broker, delivery, RECORDS[:1], company=False)  # the company has left
    assert broker.ways == ["batch"] * 3 + ["send"] * 2 + ["batch"]


async def test_a_failed_call_leaves_the_next_one_alone(broker: FakeBroker) -> None:
    delivery = Delivery("b:1", 120, lambda _: None, sleep=no_wait)
    broker.fail = {b"0": ProducerFenced()}
    with pytest.raises(ProducerFenced):
        await delivery.deliver("om.messages", RECORDS[:1])
    await delivery.deliver("om.messages", RECORDS[:1])
    assert broker.ways == ["batch", "batch"]


async def test_closed_batches_go_to_the_partition_send_would_pick_and_keep_each_keys_order(
        broker: FakeBroker) -> None:
    records = [(f"thread-{n % 7}".encode(), str(n).encode()) for n in range(40)]
    await Delivery("b:1", 120, lambda _: None, sleep=no_wait).deliver("om.messages", records)
    expected = {value: DefaultPartitioner()(key, list(range(PARTITIONS)), []) for key, value in records}
    assert broker.partitions == expected
    assert len(set(expected.values())) > 3
    for key in {key for key, _ in records}:
        sent = [value for k, value in records if k == key]
        assert [value for value in broker.landed if value in sent] == sent


async def test_no_acknowledgement_within_the_deadline_ends_the_call(broker: FakeBroker,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery_module, "STALL_REPORT_S", 0.01)
    broker.silent = True
    lines: list[str] = []
    with pytest.raises(KafkaUnavailable) as raised:
        await Delivery("b:1", 0.05, lines.append, sleep=no_wait).deliver("om.messages", RECORDS[:2])
    assert "no acknowledgement" in str(raised.value)
    assert lines and all(line.startswith("broker b:1 not acknowledging (0 of 2 acknowledged)") for line in lines)
