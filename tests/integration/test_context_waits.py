"""Issue 19 item 2: a read-your-writes wait ends when the message's context row covers it, not at its
fold; told of every fold by the embedded sink, it asks the tables only at its first look; every
event is handed to the waits once it is in the table. (The row contexts themselves: test_context_rows.py.)
"""

from __future__ import annotations

import asyncio

import pytest

from processors.config import OMConfig
from streams.reader import NotCaughtUp, Reader
from streams.reader.context_cache import ContextCache
from streams.reader.fold_watch import FoldWatch
from streams.sink.rows import delta_rows, event_rows, message_rows
from streams.sink.writer import write_batch
from tests.integration.om_pipeline import REFLECTIVE, Conversation, core_context, database_client
from tests.unit.machine.core_driver import T0

pytestmark = pytest.mark.integration
NOW = T0 + 86_400_000


@pytest.mark.parametrize("woken", [False, True], ids=["polling", "woken by the sink"])
async def test_a_wait_ends_only_when_the_row_covers_the_message_not_at_its_fold(clickhouse_dsn, woken) -> None:
    conversation = Conversation(OMConfig.model_validate(REFLECTIVE))
    conversation.talk(5, thread="t", resource="r")
    *earlier, (key, last) = conversation.messages
    client = database_client(clickhouse_dsn)
    cache = ContextCache()
    folds = FoldWatch(asyncio.get_running_loop()) if woken else None  # as the embedded worker wires them

    def announce(rows) -> None:
        cache.written(rows)
        if folds is not None:
            folds.rows_written(rows)

    def sink(batch) -> None:
        write_batch(client, batch, announce=announce, stored=folds.stored if folds is not None else None)

    reader = Reader(client, conversation.config, cache=cache, folds=folds)
    sink([*(message_rows(k, m.to_bytes(), n) for n, (k, m) in enumerate(earlier)),
          *(delta_rows(d.model_dump_json().encode()) for _, d in conversation.records),
          *(event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events))])
    assert (await reader.context("t", "r")).messages[-1].id != last.id, "the fold is stored, the message is not"
    with pytest.raises(NotCaughtUp):
        await reader.context("t", "r", wait_for_message_id=last.id, timeout=0.2)

    waiting = asyncio.create_task(reader.context("t", "r", wait_for_message_id=last.id, timeout=30))
    await asyncio.sleep(0.05)  # the wait has looked once and is parked (the test holds either way)
    await asyncio.to_thread(sink, [message_rows(key, last.to_bytes(), len(earlier))])  # no event: a row alone
    waited = await asyncio.wait_for(waiting, 10)  # woken: well before the wait's own 30 s
    assert waited.messages[-1].id == last.id
    assert await reader.context("t", "r", now_ms=NOW) == core_context(conversation, "t", NOW)


async def test_a_wait_told_of_every_fold_asks_the_tables_only_at_its_first_look(clickhouse_dsn) -> None:
    """The embedded sink hands every stored event to the waits (streams/reader/fold_watch.py): after a
    first look found no fold, wakes by the message's own row or by other rows of the key ask nothing
    (each was a chDB query), and the fold, when handed, ends the wait."""
    conversation = Conversation(OMConfig.model_validate(REFLECTIVE))
    conversation.talk(5, thread="t", resource="r")
    *earlier, (key, last) = conversation.messages
    fold = [(k, e) for k, e in conversation.events
            if e.type == "status" and e.applied_through is not None and e.applied_through.message_id == last.id]
    assert fold, "the last message's fold is a status event naming it"
    client = database_client(clickhouse_dsn)
    cache = ContextCache()
    folds = FoldWatch(asyncio.get_running_loop())

    def announce(rows) -> None:
        cache.written(rows)
        folds.rows_written(rows)

    def sink(batch) -> None:
        write_batch(client, batch, announce=announce, stored=folds.stored)

    reader = Reader(client, conversation.config, cache=cache, folds=folds)
    asked = []
    load = reader._awaited.load

    async def counted(awaited):
        asked.append(awaited.message_id)
        return await load(awaited)

    reader._awaited.load = counted  # type: ignore[method-assign]
    loaded = []
    load_folds = reader._applied.load

    async def counted_folds(key):
        loaded.append(key)
        return await load_folds(key)

    reader._applied.load = counted_folds  # type: ignore[method-assign]
    sink([*(message_rows(k, m.to_bytes(), n) for n, (k, m) in enumerate(earlier)),
          *(delta_rows(d.model_dump_json().encode()) for _, d in conversation.records),
          *(event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events) if (k, e) not in fold)])
    waiting = asyncio.create_task(reader.context("t", "r", wait_for_message_id=last.id, timeout=30))
    deadline = asyncio.get_running_loop().time() + 10
    while not loaded:  # the first look: the key's folds, loaded once (streams/reader/fold_memory.py)
        assert asyncio.get_running_loop().time() < deadline, "the wait never looked"
        await asyncio.sleep(0.01)
    await asyncio.to_thread(sink, [message_rows(key, last.to_bytes(), len(earlier))])  # its row: no fold yet
    await asyncio.to_thread(sink, [message_rows(key, earlier[0][1].to_bytes(), 0)])  # another row of the key
    assert not waiting.done()
    await asyncio.to_thread(sink, [event_rows(k, e.to_bytes(), 100 + n) for n, (k, e) in enumerate(fold)])
    waited = await asyncio.wait_for(waiting, 10)
    assert waited.messages[-1].id == last.id
    assert loaded == [("r", key)] and asked == [], "one query: the first look's load of the key's folds"
    # a later wait on the key, for a message folded before it began, asks nothing at all
    await reader.context("t", "r", wait_for_message_id=earlier[-1][1].id, timeout=5)
    assert len(loaded) == 1 and asked == []


def test_every_event_is_handed_to_the_waits_once_it_is_in_the_table(clickhouse_dsn) -> None:
    """The rule a wait's single query rests on (streams/reader/fold_watch.py): whatever else the sink
    hands over before an insert, each event is handed over again when the table has it."""
    conversation = Conversation(OMConfig.model_validate(REFLECTIVE))
    conversation.talk(5, thread="t", resource="r")
    client = database_client(clickhouse_dsn)
    seen_stored: set[int] = set()

    def stored(events) -> None:  # from the writer's thread: what does the table hold right now?
        ids = [row[6] for row in events]  # event_id
        found = client.query("SELECT event_id FROM om_events WHERE event_id IN {ids:Array(UInt64)}",
                             parameters={"ids": ids}).result_rows if ids else []
        seen_stored.update(row[0] for row in found)

    events = [event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events)]
    write_batch(client, [*(message_rows(k, m.to_bytes(), n) for n, (k, m) in enumerate(conversation.messages)),
                         *(delta_rows(d.model_dump_json().encode()) for _, d in conversation.records), *events],
                stored=stored)
    assert {rows.rows["om_events"][0][6] for rows in events} <= seen_stored
