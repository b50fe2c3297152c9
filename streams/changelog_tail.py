"""Where a transactional changelog's committed records end: the offset of its last committed record.

Under ``exactly_once`` every transaction that writes a changelog partition ends with a marker, so
the partition's end (its last stable offset) is a marker's offset + 1, never a record's. A reader
that waits for "the record before the end" waits for a record that does not exist; this finds the
one that does. Kafka offers no request for it, so it reads the tail, read_committed (aborted
records are skipped as every reader of the changelog skips them), over a window that grows ×8 from
the end until a record turns up or the window reaches the partition's first offset.

Rules kept: the answer for a partition is the offset of the last record a read_committed consumer
returns below the end offset asked at the start, or -1 when it returns none there (empty, or only
aborted records and markers). Records committed after that end offset are not counted.
"""

from __future__ import annotations

import time

from aiokafka import AIOKafkaConsumer, TopicPartition

FIRST_WINDOW = 8
GROWTH = 8


async def last_committed_offsets(consumer: AIOKafkaConsumer, partitions: set[TopicPartition],
                                 deadline_s: float = 30.0) -> dict[TopicPartition, int]:
    """``consumer``: started, read_committed, no group; it is (re)assigned to ``partitions`` here."""
    if not partitions:
        return {}
    consumer.assign(list(partitions))
    firsts = await consumer.beginning_offsets(list(partitions))
    ends = await consumer.end_offsets(list(partitions))  # read_committed: the last stable offsets
    found = {tp: -1 for tp in partitions}
    todo = {tp for tp in partitions if ends[tp] > firsts[tp]}
    window = FIRST_WINDOW
    deadline = time.monotonic() + deadline_s
    while todo:
        starts = {tp: max(firsts[tp], ends[tp] - window) for tp in todo}
        last = await _last_record_between(consumer, starts, ends, deadline)
        for tp in list(todo):
            if tp in last:
                found[tp] = last[tp]
            if tp in last or starts[tp] == firsts[tp]:
                todo.discard(tp)
        window *= GROWTH
    return found


async def _last_record_between(consumer: AIOKafkaConsumer, starts: dict[TopicPartition, int],
                               ends: dict[TopicPartition, int], deadline: float) -> dict[TopicPartition, int]:
    """The offset of the last record in ``[start, end)`` for each partition that has one."""
    for tp, start in starts.items():
        consumer.seek(tp, start)
    last: dict[TopicPartition, int] = {}
    reading = set(starts)
    while reading:
        if time.monotonic() > deadline:
            raise TimeoutError(f"reading the changelog tail of {sorted(reading)} did not reach its end")
        for tp, records in (await consumer.getmany(*reading, timeout_ms=100)).items():
            for record in records:
                if record.offset < ends[tp]:
                    last[tp] = record.offset
        reading = {tp for tp in reading if await consumer.position(tp) < ends[tp]}
    return last
