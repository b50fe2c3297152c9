"""Where a transactional changelog's committed records end: the offset of its last committed record.

Under ``exactly_once`` every transaction that writes a changelog partition ends with a marker, so
the partition's end (its last stable offset) is a marker's offset + 1, never a record's. A reader
that waits for "the record before the end" waits for a record that does not exist; this finds the
one that does. Kafka offers no request for it, so it reads the tail, read_committed (aborted
records are skipped as every reader of the changelog skips them), over a window that grows ×8 from
the end until a record turns up or the window reaches the partition's first offset.

The end is taken only once no transaction is open on the partition: its last stable offset (what
read_committed readers may see) equals its high watermark (everything written). While a previous
owner's last transaction is still being decided — its commit markers not yet written, or not yet
fenced by the new owner's producer — the last stable offset stops before that transaction's
records, and a tail taken then would end recovery without a result the events topic is about to
carry (seen once, in the second-worker fault test, before this wait). A partition that does not
settle within the deadline raises, and the caller falls back to Faust's own recovery.

Rules kept: the answer for a partition is the offset of the last record a read_committed consumer
returns below the end offset asked once the partition settled, or -1 when it returns none there
(empty, or only aborted records and markers). Records committed after that end offset are not
counted.
"""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer, TopicPartition

FIRST_WINDOW = 8
GROWTH = 8


SETTLE_POLL_S = 0.02


async def last_committed_offsets(consumer: AIOKafkaConsumer, partitions: set[TopicPartition],
                                 deadline_s: float = 30.0, *,
                                 uncommitted: AIOKafkaConsumer | None = None) -> dict[TopicPartition, int]:
    """``consumer``: started, read_committed, no group; it is (re)assigned to ``partitions`` here.

    ``uncommitted``: started, read_uncommitted, no group — it tells the high watermarks that the
    end waits for (without one the end is taken at once, as for a partition no one writes)."""
    if not partitions:
        return {}
    consumer.assign(list(partitions))
    firsts = await consumer.beginning_offsets(list(partitions))
    deadline = time.monotonic() + deadline_s
    ends = await _settled_ends(consumer, uncommitted, list(partitions), deadline)
    found = {tp: -1 for tp in partitions}
    todo = {tp for tp in partitions if ends[tp] > firsts[tp]}
    window = FIRST_WINDOW
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


async def _settled_ends(consumer: AIOKafkaConsumer, uncommitted: AIOKafkaConsumer | None,
                        partitions: list[TopicPartition], deadline: float) -> dict[TopicPartition, int]:
    """The last stable offsets, asked again until each equals its partition's high watermark."""
    while True:
        stable = await consumer.end_offsets(partitions)
        if uncommitted is None:
            return stable
        written = await uncommitted.end_offsets(partitions)
        open_ = sorted(str(tp) for tp in partitions if stable[tp] < written[tp])
        if not open_:
            return stable
        if time.monotonic() > deadline:
            raise TimeoutError(f"a transaction stayed open on {open_}: its last stable offset is below its end")
        await asyncio.sleep(SETTLE_POLL_S)


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
