"""streams.bulk_recovery against the real broker: exactly the committed records after the start
through the last committed record, in order, none aborted, none past it, within the deadline."""

from __future__ import annotations

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from streams.bulk_recovery import MAX_RECORDS, read_in_bulk
from streams.changelog_tail import last_committed_offsets
from tests.integration.test_changelog_tail import abort, commit, producer, reader  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration


async def test_committed_records_through_the_last_committed_one_and_nothing_else(
    new_topic, producer: AIOKafkaProducer, reader: AIOKafkaConsumer  # noqa: F811
) -> None:
    topic = await new_topic(partitions=3)
    tp = [TopicPartition(topic, p) for p in range(3)]
    await commit(producer, topic, 0, [b"a0", b"a1"])
    await abort(producer, topic, 0)
    await commit(producer, topic, 0, [b"a2"])
    await abort(producer, topic, 0)  # the tail: an aborted record and markers after the last committed
    many = [b"b%d" % n for n in range(MAX_RECORDS + 500)]  # more than one fetch's worth
    for start in range(0, len(many), 2_000):
        await commit(producer, topic, 1, many[start:start + 2_000])
    await abort(producer, topic, 2)  # nothing committed
    highwaters = await last_committed_offsets(reader, set(tp))
    after = await commit(producer, topic, 0, [b"late"])  # past the highwater: Faust's to read

    seen: list[tuple[int, bytes]] = []
    applied = await read_in_bulk(reader, {t: -1 for t in tp}, highwaters,
                                 lambda t, _offset, _key, value: seen.append((t.partition, value)), deadline_s=60)

    assert [v for p, v in seen if p == 0] == [b"a0", b"a1", b"a2"]
    assert [v for p, v in seen if p == 1] == many
    assert not [v for p, v in seen if p == 2]
    assert applied == {tp[0]: highwaters[tp[0]], tp[1]: highwaters[tp[1]], tp[2]: -1}
    assert after > highwaters[tp[0]]


async def test_a_kept_partition_is_read_from_where_it_was_and_the_deadline_leaves_the_rest_to_faust(
    new_topic, producer: AIOKafkaProducer, reader: AIOKafkaConsumer  # noqa: F811
) -> None:
    topic = await new_topic(partitions=1)
    tp = TopicPartition(topic, 0)
    first = await commit(producer, topic, 0, [b"x", b"y"])
    last = await commit(producer, topic, 0, [b"z"])
    seen: list[bytes] = []
    applied = await read_in_bulk(reader, {tp: first}, {tp: last}, lambda _t, _o, _k, v: seen.append(v), deadline_s=60)
    assert seen == [b"z"] and applied == {tp: last}
    assert await read_in_bulk(reader, {tp: -1}, {tp: last}, lambda *_: None, deadline_s=0) == {tp: -1}, \
        "no time: nothing applied, Faust starts where it would have"
