"""The sink announces its shortcuts' context rows before it inserts the batch (streams/sink/writer.py).

In the embedded worker a read-your-writes wait returns the rows it is handed, so the batch's
inserts are off the wait's path. What must hold: the rows announced early are the rows then stored
(the same content as a recompute), their events are handed to the waits with them, a key that
needs a recompute is announced only after the inserts it reads, and a write that fails after an
early announce withdraws those keys from the reader's cache."""

from __future__ import annotations

from typing import Any

import pytest

from processors.config import OMConfig
from streams.reader.context_cache import ContextCache
from streams.reader.queries import stored_context_rows
from streams.sink.contexts import context_rows
from streams.sink.row_cache import RowCache
from streams.sink.rows import OBSERVED_VERSION, Rows
from streams.sink.writer import write_batch
from tests.integration.om_pipeline import Conversation, HoldingInserts, database_client

pytestmark = pytest.mark.integration
KEY = ("r", "thread:t")


def _observed_copy(item: Rows) -> bool:
    """The processor's observed copy of a message (``MessageInserted.observed``)."""
    return any(row[-2] >= OBSERVED_VERSION for row in item.rows.get("om_messages", ()))


def _stored_messages(client) -> set[str]:
    return {row[0] for row in client.query("SELECT id FROM om_messages WHERE resource_id = 'r'").result_rows}


def test_a_turns_row_is_announced_before_the_batch_is_inserted_and_is_the_row_then_stored(clickhouse_dsn) -> None:
    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    conversation = Conversation(OMConfig.model_validate({"observation": {"messageTokens": 400}}))
    calls: list[tuple[str, Any, set[str]]] = []
    announce = lambda rows: calls.append(("rows", [list(r) for r in rows], _stored_messages(client)))  # noqa: E731
    stored = lambda events: calls.append(("events", [e[7] for e in events], _stored_messages(client)))  # noqa: E731
    early = 0
    for n in range(12):
        calls.clear()
        write_batch(client, conversation.sunk_turn(n, n + 1), landing=announce, stored=stored, cache=rows_cache)
        first = calls[0]
        assert first[0] == "rows", "rows come before their events"
        early += f"m{n}" not in first[2]
        assert f"m{n}" not in first[2], f"turn {n}: announced before the message was inserted"
        kind, applied, inserted = calls[1]
        assert kind == "events" and f"m{n}" in applied and inserted == first[2], \
            "the fold's status is handed over with its row, before the inserts"
        stored_row, = stored_context_rows(client, [KEY])
        assert first[1][0] == list(stored_row), "the row announced early is the row stored"
        assert list(stored_row)[:-1] == context_rows(client, [KEY])[0][:-1], "and what a recompute writes"
    assert early == 12, "the key's first row too: it starts from an empty one"


def test_a_write_that_fails_after_announcing_withdraws_its_keys(clickhouse_dsn) -> None:
    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    conversation = Conversation(OMConfig())
    cache, withdrawn = ContextCache(), []
    write_batch(client, conversation.sunk_turn(0, 1), announce=cache.written, cache=rows_cache)
    cache.put("thread:t", {"r": _decoded(client)})
    assert cache.get("thread:t") is not None

    class Refusing:
        """The client, refusing the batch's message insert (ClickHouse up, the record refused)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

        def insert(self, table: str, *args: Any, **kwargs: Any) -> Any:
            if table == "om_messages":
                raise RuntimeError("refused")
            return client.insert(table, *args, **kwargs)

        def command(self, sql: str, *args: Any, **kwargs: Any) -> Any:
            if sql.startswith("INSERT INTO om_messages"):
                raise RuntimeError("refused")
            return client.command(sql, *args, **kwargs)

    announced: list[list[Any]] = []

    def announce(rows):
        announced.extend(rows)
        cache.landing(rows)

    def withdraw(keys):
        withdrawn.extend(keys)
        cache.forget(keys)

    with pytest.raises(RuntimeError):
        write_batch(Refusing(), conversation.sunk_turn(1, 2), landing=announce, cache=rows_cache, withdraw=withdraw)
    assert announced and withdrawn == ["thread:t"], "the row was announced, then withdrawn"
    assert cache.get("thread:t") is None, "the reader's cache no longer serves the row that was never stored"
    assert "m1" not in _stored_messages(client)


def _decoded(client):
    from streams.reader.queries import context_rows as reader_rows
    return reader_rows(client, ["thread:t"])[0]["r"]


def test_a_late_message_observed_in_its_own_batch_is_recomputed_not_appended(clickhouse_dsn) -> None:
    """A chat message that reaches the sink only with the observation that covers it (the topics
    lag each other), the batch without the processor's observed copy: its observation row is not
    inserted yet when the shortcut runs, so the batch's own rows must count (streams/sink/context_appends.py)."""
    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    conversation = Conversation(OMConfig.model_validate({"observation": {"messageTokens": 400, "bufferTokens": False}}))
    held: Rows | None = None
    for n in range(16):
        batch = conversation.sunk_turn(n, n + 1)
        if n == 1:
            held, batch = batch[0], batch[1:]  # m1's own row comes late
        observing = any(r[1] == "m1" for item in batch for r in item.rows.get("om_message_observations", ()))
        if observing:  # m1 comes with the observation covering it, without the processor's observed copy
            assert held is not None
            batch = [held, *(item for item in batch if not _observed_copy(item))]
        write_batch(client, batch, cache=rows_cache)
        stored_row, = stored_context_rows(client, [KEY])
        assert list(stored_row)[:-1] == context_rows(client, [KEY])[0][:-1], f"turn {n}"
        if observing:
            return
    raise AssertionError("no observation covered m1: the check needs one")


async def test_a_wait_ends_on_the_row_handed_over_while_the_batch_is_still_being_inserted(clickhouse_dsn) -> None:
    """The embedded wiring (a cache and the sink's wake-ups), a first turn whose key the cache does
    not hold: the wait returns the handed row, with the message, while the batch's insert is held;
    and a read after it, which finds the table behind, is served the announced row."""
    import asyncio
    import threading

    from streams.reader import Reader
    from streams.reader.fold_watch import FoldWatch

    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    conversation = Conversation(OMConfig())
    write_batch(client, conversation.sunk_turn(0, 1), cache=rows_cache)
    cache, folds = ContextCache(), FoldWatch(asyncio.get_running_loop())
    reader = Reader(client, conversation.config, cache=cache, folds=folds)
    released, reached = threading.Event(), threading.Event()

    def announce(rows) -> None:
        cache.written(rows)
        folds.rows_written(rows)

    def landing(rows) -> None:
        cache.landing(rows)
        folds.rows_written(rows)

    batch = conversation.sunk_turn(1, 2)
    waiting = asyncio.create_task(reader.context("t", "r", wait_for_message_id="m1", timeout=30))
    await asyncio.sleep(0.05)  # parked (the test holds either way)
    holding = HoldingInserts(client, "om_messages", released, reached)
    writing = asyncio.create_task(asyncio.to_thread(write_batch, holding, batch, announce=announce,
                                                    landing=landing, stored=folds.stored, cache=rows_cache))
    try:
        waited = await asyncio.wait_for(waiting, 10)
        assert waited.messages[-1].id == "m1"
        # the wait may return before the writer even reaches the insert (told of the fold, it asks nothing)
        assert await asyncio.to_thread(reached.wait, 10), "the batch's insert began"
        assert "m1" not in _stored_messages(client), "returned while the insert was held"
        assert (await reader.context("t", "r")).messages[-1].id == "m1", \
            "a read after the wait is not older than its answer, though the table is"
        assert (await reader.status("t", "r")).applied_through.message_id == "m1"
    finally:
        released.set()
        await writing
    assert "m1" in _stored_messages(client)


async def test_a_wait_that_begins_after_the_hand_over_ends_when_the_events_land(clickhouse_dsn) -> None:
    """The sink handed a turn's row and fold early; a wait that registers only afterwards, and looks
    before the fold's event is in the table, is woken again once it is (not at its timeout)."""
    import asyncio
    import threading
    import time

    from streams.reader import Reader
    from streams.reader.fold_watch import FoldWatch

    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    conversation = Conversation(OMConfig())
    write_batch(client, conversation.sunk_turn(0, 1), cache=rows_cache)
    folds = FoldWatch(asyncio.get_running_loop())
    reader = Reader(client, conversation.config, cache=ContextCache(), folds=folds)  # a cache with no entry yet
    released, announced = threading.Event(), threading.Event()

    def landing(rows) -> None:
        folds.rows_written(rows)
        announced.set()

    writing = asyncio.create_task(asyncio.to_thread(write_batch, HoldingInserts(client, "om_events", released),
                                                    conversation.sunk_turn(1, 2), landing=landing,
                                                    stored=folds.stored, cache=rows_cache))
    try:
        assert await asyncio.to_thread(announced.wait, 10)
        waiting = asyncio.create_task(reader.context("t", "r", wait_for_message_id="m1", timeout=20))
        await asyncio.sleep(0.2)  # it registered, looked, and found no fold stored yet
        assert not waiting.done()
        started = time.monotonic()
        released.set()
        waited = await asyncio.wait_for(waiting, 20)
        assert waited.messages[-1].id == "m1"
        assert time.monotonic() - started < 5, "woken when the fold's event landed, not at the wait's timeout"
    finally:
        released.set()
        await writing
