"""Issue 20 item 1: a batch's records go to the transaction of their input partition as one record
batch per output partition, in order, and are confirmed together (streams/transactions.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.errors import MessageSizeTooLargeError
from aiokafka.producer.message_accumulator import BatchBuilder
from aiokafka.record.default_records import DefaultRecordBatch
from faust.exceptions import ProducerSendError

from streams.transactions import DeliveryFailed, Outbox


class FakeProducer:
    """aiokafka's batch interface: real record batches, kept instead of sent; each partition's log
    starts at offset 100, as after earlier records."""

    def __init__(self, batch_size: int = 16_384, refuse: bool = False) -> None:
        self.batch_size, self.refuse = batch_size, refuse
        self.sent: list[tuple[str, int, list[tuple[bytes | None, bytes | None]]]] = []
        self.ends: dict[tuple[str, int], int] = {}

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(self.batch_size, 0, is_transactional=True)

    async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> asyncio.Future:
        records = [(r.key, r.value) for r in DefaultRecordBatch(bytes(batch._build()))]
        self.sent.append((topic, partition, records))
        future = asyncio.get_running_loop().create_future()
        if self.refuse:
            future.set_exception(MessageSizeTooLargeError())
        else:
            base = self.ends.get((topic, partition), 100)
            self.ends[(topic, partition)] = base + len(records)
            future.set_result(SimpleNamespace(topic=topic, partition=partition, offset=base))
        return future


def fake_app(producers: dict[str, FakeProducer]) -> Any:
    groups = {"om.messages.v1": 0, "om.results.v1": 0, "om.jobs.v1": 1}
    return SimpleNamespace(
        conf=SimpleNamespace(id="om-processor"),
        assignor=SimpleNamespace(group_for_topic=groups.__getitem__),
        producer=SimpleNamespace(_transaction_producers=producers,
                                 _trn_locks={tid: asyncio.Lock() for tid in producers}))


async def test_records_go_to_their_input_partitions_transaction_one_batch_per_output_partition() -> None:
    p0, p1 = FakeProducer(), FakeProducer()
    outbox = Outbox(fake_app({"om-processor-0-0": p0, "om-processor-0-1": p1}))
    outbox.add("om.messages.v1", 0, "om.events.v1", b"k", b"e1")
    outbox.add("om.results.v1", 1, "om.events.v1", b"k", b"e2")
    outbox.add("om.messages.v1", 0, "changelog", b"c", b"s1")
    outbox.add("om.messages.v1", 0, "om.events.v1", b"k", b"e3")
    outbox.add("om.messages.v1", 0, "changelog", b"c", None)
    last = await outbox.confirm()
    assert last == {("om-processor-0-0", "om.events.v1", 0): 101, ("om-processor-0-0", "changelog", 0): 101,
                    ("om-processor-0-1", "om.events.v1", 1): 100}, "the offset of each partition's last record"
    assert p0.sent == [("om.events.v1", 0, [(b"k", b"e1"), (b"k", b"e3")]),
                       ("changelog", 0, [(b"c", b"s1"), (b"c", None)])]
    assert p1.sent == [("om.events.v1", 1, [(b"k", b"e2")])]


async def test_records_past_the_batch_size_go_in_further_batches_in_order() -> None:
    producer = FakeProducer(batch_size=200)
    outbox = Outbox(fake_app({"om-processor-0-0": producer}))
    values = [bytes([65 + n]) * 90 for n in range(5)]
    for value in values:
        outbox.add("om.messages.v1", 0, "om.records.v1", b"k", value)
    assert await outbox.confirm() == {("om-processor-0-0", "om.records.v1", 0): 104}
    assert len(producer.sent) > 1
    assert [v for _, _, records in producer.sent for _, v in records] == values


async def test_a_partition_without_an_open_transaction_refuses_the_record() -> None:
    outbox = Outbox(fake_app({"om-processor-0-0": FakeProducer()}))
    with pytest.raises(ProducerSendError):
        outbox.add("om.jobs.v1", 0, "om.results.v1", b"k", b"r")


async def test_a_refused_batch_fails_the_confirmation() -> None:
    outbox = Outbox(fake_app({"om-processor-0-0": FakeProducer(refuse=True)}))
    outbox.add("om.messages.v1", 0, "om.events.v1", b"k", b"e")
    with pytest.raises(DeliveryFailed):
        await outbox.confirm()
