"""Issue 19: a thread's first read costs no query in the embedded reader.

Against the real engine: the keys' hashes the table gives (``context_key_hashes``) are the ones the
cache computes (``key_hash``), non-ASCII keys included; once the cache knows them, the reader answers
a key the table never held as not found without a query, and still queries a stored key once; a
read-your-writes wait on such a key asks no query at its first look either.
"""

from __future__ import annotations

import asyncio

import pytest

from processors.config import OMConfig
from streams.reader import NotCaughtUp, Reader, ThreadNotFound
from streams.reader.context_cache import ContextCache, key_hash
from streams.reader.fold_watch import FoldWatch
from streams.reader.queries import context_key_hashes
from streams.sink.rows import delta_rows, event_rows, message_rows
from streams.sink.writer import write_batch
from tests.integration.om_pipeline import REFLECTIVE, Conversation, core_context, database_client
from tests.unit.machine.core_driver import T0

pytestmark = pytest.mark.integration
THREADS = ("t", "tü-🙂-線", "t" * 200)
NOW = T0 + 86_400_000


async def test_the_tables_key_hashes_are_the_caches_and_an_unknown_key_costs_no_query(clickhouse_dsn) -> None:
    conversation = Conversation(OMConfig.model_validate(REFLECTIVE))
    for thread in THREADS:
        conversation.talk(3, thread=thread, resource="r")
    client = database_client(clickhouse_dsn)
    assert context_key_hashes(client) == []
    write_batch(client, [*(message_rows(k, m.to_bytes(), n) for n, (k, m) in enumerate(conversation.messages)),
                         *(delta_rows(d.model_dump_json().encode()) for _, d in conversation.records),
                         *(event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events))])
    keys = {key for key, _ in conversation.messages}
    assert len(keys) == len(THREADS)
    assert sorted(context_key_hashes(client)) == sorted(key_hash(key) for key in keys)

    cache = ContextCache()
    cache.know_stored(context_key_hashes(client))
    reader = Reader(client, conversation.config, cache=cache)
    loaded: list[str] = []
    load = reader._rows.load

    async def counted(key: str):
        loaded.append(key)
        return await load(key)

    reader._rows.load = counted  # type: ignore[method-assign]
    with pytest.raises(ThreadNotFound):
        await reader.context("never-seen", "r")
    with pytest.raises(ThreadNotFound):
        await reader.status("never-seen", "r")
    assert loaded == [], "a key the table never held: answered from memory"
    for thread in THREADS:
        assert await reader.context(thread, "r", now_ms=NOW) == core_context(conversation, thread, NOW), thread
    assert len(loaded) == len(THREADS), "a stored key: one query, then the cache"
    await reader.context(THREADS[0], "r")
    assert len(loaded) == len(THREADS)


async def test_a_wait_on_a_key_the_table_never_held_asks_no_query_at_its_first_look(clickhouse_dsn) -> None:
    conversation = Conversation(OMConfig.model_validate(REFLECTIVE))
    conversation.talk(3, thread="t", resource="r")
    client = database_client(clickhouse_dsn)
    write_batch(client, [*(message_rows(k, m.to_bytes(), n) for n, (k, m) in enumerate(conversation.messages)),
                         *(event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events))])
    cache = ContextCache()
    cache.know_stored(context_key_hashes(client))
    reader = Reader(client, conversation.config, cache=cache, folds=FoldWatch(asyncio.get_running_loop()))
    asked: list[tuple[str, str]] = []
    load = reader._applied.load

    async def counted(key: tuple[str, str]):
        asked.append(key)
        return await load(key)

    reader._applied.load = counted  # type: ignore[method-assign]
    with pytest.raises(NotCaughtUp):
        await reader.context("never-seen", "r", wait_for_message_id="m-1", timeout=0.2)
    assert asked == [], "no fold can be stored for a key without a context row"
    last = conversation.messages[-1][1]
    waited = await reader.context("t", "r", wait_for_message_id=last.id, timeout=10, now_ms=NOW)
    assert waited == core_context(conversation, "t", NOW)
    assert asked == [("r", conversation.messages[-1][0])], "a stored key's folds: loaded once"
