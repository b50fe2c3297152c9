"""What a fault test prints when a key's pipeline went quiet: for one partition number, on every
topic of the pipeline and the state changelog, the worker group's committed offset, the end offset,
and each record — committed or not — with its kind, cycle and message ids.

For reading a failure from CI, where the brokers are gone by the time anyone looks: it shows at
once whether a record was never written, written in an aborted transaction, or committed and then
passed by the group's offset unprocessed.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from streams.app import STATE_TABLE
from streams.topics import Topics

READ_DEADLINE_S = 20.0


async def describe_partition(bootstrap: str, prefix: str, partition: int, *, app: str | None = None) -> str:
    app = app or f"{prefix}-worker"
    topics = Topics.for_prefix(prefix)
    names = [topics.messages, topics.control, topics.results, topics.jobs, topics.events,
             f"{app}-{STATE_TABLE}-changelog"]  # as streams/app.py names it
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        group = await admin.list_consumer_group_offsets(app)
    finally:
        await admin.close()
    lines = [f"partition {partition} (group {app}):"]
    for name in names:
        tp = TopicPartition(name, partition)
        committed_records, end, reached = await _read(bootstrap, tp, "read_committed")
        records, _, read = await _read(bootstrap, tp, "read_uncommitted")
        seen = {offset for offset, _, _ in committed_records}
        offset = group.get(tp)
        unread = "" if min(reached, read) >= end else f" (read only to {read}, committed only to {reached})"
        lines.append(f"  {name.rsplit('.', 2)[-2] if name != names[-1] else 'changelog'}: "
                     f"committed {offset.offset if offset else None}, end {end}{unread}")
        for at, key, value in records:
            mark = "   " if at in seen else "ABT" if at < reached else "?  "
            lines.append(f"    {at:>4} {mark} {key} {_summary(value)}")
    return "\n".join(lines)


async def _read(bootstrap: str, tp: TopicPartition, level: str,
                deadline_s: float = READ_DEADLINE_S) -> tuple[list[tuple[int, str, Any]], int, int]:
    """The records of ``tp`` at ``level``, its end offset, and the position the read reached: a
    cluster whose leaders move answers fetches late, and a record not read is not an aborted one."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                isolation_level=level, fetch_max_wait_ms=50,
                                auto_offset_reset="earliest")  # seek_to_beginning alone may lose to "latest"
    await consumer.start()
    try:
        consumer.assign([tp])
        end = (await consumer.end_offsets([tp]))[tp]
        await consumer.seek_to_beginning(tp)
        out: list[tuple[int, str, Any]] = []
        position, stop_at = 0, time.monotonic() + deadline_s
        while position < end and time.monotonic() < stop_at:
            batch = await consumer.getmany(tp, timeout_ms=250)
            for record in batch.get(tp, []):
                out.append((record.offset, (record.key or b"").decode(errors="replace"), record.value))
            position = await consumer.position(tp)
        return out, end, position
    finally:
        await consumer.stop()


def _summary(value: bytes | None) -> str:
    """The record's kind and ids, never its text."""
    if value is None:
        return "(tombstone)"
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError:
        return f"({len(value)} bytes)"
    if not isinstance(obj, dict):
        return type(obj).__name__
    if obj.get("kind") == "key-state":
        window = [m.get("id") for m in obj.get("window") or []]
        flights = [f.get("cycle_id") for f in obj.get("in_flight") or []]
        return f"state v{obj.get('version')} window {len(window)} …{window[-3:]} in flight {flights}"
    fields = [str(obj.get(name)) for name in ("type", "kind", "cycle_id", "id") if obj.get(name) is not None]
    return " ".join(fields)
