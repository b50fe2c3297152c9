"""Concurrent reader calls are coalesced into shared queries: each caller must still get exactly its own answer.

The rows are what the sink writes for conversations folded by the core, inserted straight into the
engine (no broker): threads that reflected, threads without a snapshot yet, a thread deleted and
re-created (its older messages arrive after the deletion and must stay hidden), threads of
several resources, and requests for other resources' threads, unknown threads and crafted ids.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from clickhouse_connect.driver.client import Client

from processors.config import OMConfig
from schemas.control import ThreadDeleted
from streams.reader import Reader, ThreadNotFound, queries
from streams.reader.queries import WindowRequest
from tests.integration.om_pipeline import REFLECTIVE, Conversation, database_client, store_rows
from tests.unit.machine.core_driver import MINUTE, T0

pytestmark = pytest.mark.integration
NOW = T0 + 30 * 86_400_000
CRAFTED = ["t0' OR '1'='1", "t0\\' --", "%", "t0\x00", "t0\"; DROP TABLE om_messages; --"]


def talked(config: OMConfig) -> Conversation:
    conversation = Conversation(config)
    for n in range(12):
        conversation.talk(60 if n % 3 == 0 else 5, thread=f"t{n}", resource=f"r{n % 3}", gap_every=20)
    conversation.talk(1, thread="lonely", resource="r0")
    conversation.talk(30, thread="gone", resource="r1")
    conversation.feed(ThreadDeleted(thread_id="gone", resource_id="r1", at=T0 + 40 * MINUTE))
    conversation.talk(4, thread="gone", resource="r1", start=T0 + 50 * MINUTE)
    return conversation


def requests(conversation: Conversation) -> list[tuple[str, str]]:
    owned = sorted({(m.thread_id, m.resource_id) for _, m in conversation.messages})
    foreign = [(thread, "r2" if resource != "r2" else "r0") for thread, resource in owned[:4]]
    probes = [("nope", "r0"), *((crafted, "r0") for crafted in CRAFTED), ("t0", CRAFTED[0])]
    return owned + foreign + probes + owned[:3]  # the last are asked twice in one batch


async def answer(call: Any) -> Any:
    try:
        return await call
    except ThreadNotFound:
        return "not found"


async def both_ways(reader: Reader, asked: list[tuple[str, str]], read: Any) -> tuple[list[Any], list[Any]]:
    sequential = [await answer(read(reader, thread, resource)) for thread, resource in asked]
    concurrent = await asyncio.gather(*(answer(read(reader, thread, resource)) for thread, resource in asked))
    return sequential, list(concurrent)


def context(reader: Reader, thread: str, resource: str) -> Any:
    return reader.context(thread, resource, now_ms=NOW)


def status(reader: Reader, thread: str, resource: str) -> Any:
    return reader.status(thread, resource)


@pytest.mark.parametrize("options", [
    REFLECTIVE,
    {**REFLECTIVE, "observation": {"message_tokens": 1500, "manage_working_memory": True}},
], ids=["thread-scope", "working-memory"])
async def test_concurrent_reads_equal_sequential_reads(clickhouse_dsn, options) -> None:
    config = OMConfig.model_validate(options)
    conversation = talked(config)
    assert conversation.states["thread:t0"].record.generation >= 1, "a thread must have reflected"
    client = database_client(clickhouse_dsn)
    store_rows(client, conversation)
    reader = Reader(client, config)
    asked = requests(conversation)

    contexts, concurrent_contexts = await both_ways(reader, asked, context)
    statuses, concurrent_statuses = await both_ways(reader, asked, status)
    assert concurrent_contexts == contexts and concurrent_statuses == statuses
    found = {pair for pair, got in zip(asked, contexts, strict=True) if got != "not found"}
    assert found == {(m.thread_id, m.resource_id) for _, m in conversation.messages}
    gone = contexts[asked.index(("gone", "r1"))]
    assert [m.id for m in gone.messages] == [f"gone-m{i}" for i in range(4)], "the tombstone hides the old messages"
    assert statuses[asked.index(("t0", "r0"))].generation == conversation.states["thread:t0"].record.generation


async def test_concurrent_reads_in_resource_scope(clickhouse_dsn) -> None:
    config = OMConfig.model_validate({**REFLECTIVE, "scope": "resource",
                                      "observation": {"message_tokens": 1500, "buffer_tokens": False}})
    conversation = Conversation(config)
    for n in range(6):
        conversation.talk(40, thread=f"t{n}", resource=f"r{n % 2}", start=T0 + n * MINUTE)
    client = database_client(clickhouse_dsn)
    store_rows(client, conversation)
    reader = Reader(client, config)
    asked = requests(conversation)

    contexts, concurrent_contexts = await both_ways(reader, asked, context)
    assert concurrent_contexts == contexts
    owned = {(m.thread_id, m.resource_id) for _, m in conversation.messages}
    assert {pair for pair, got in zip(asked, contexts, strict=True) if got != "not found"} == owned


async def test_concurrent_waits_for_messages(clickhouse_dsn) -> None:
    config = OMConfig.model_validate(REFLECTIVE)
    conversation = talked(config)
    client = database_client(clickhouse_dsn)
    store_rows(client, conversation)
    reader = Reader(client, config)
    last = {m.thread_id: m for _, m in conversation.messages}
    waits = [reader.context(m.thread_id, m.resource_id, wait_for_message_id=m.id, timeout=5, now_ms=NOW)
             for m in last.values()]
    got = await asyncio.gather(*waits)
    assert got == [await reader.context(m.thread_id, m.resource_id, now_ms=NOW) for m in last.values()]


class FailingFor:
    """A client whose queries fail when they name ``poison``: a stand-in for a query that breaks."""

    def __init__(self, client: Client, poison: str) -> None:
        self.client = client
        self.poison = poison

    def query(self, sql: str, parameters: dict[str, Any]) -> Any:
        if self.poison in repr(parameters):
            raise RuntimeError("the engine refused this query")
        return self.client.query(sql, parameters=parameters)


async def test_a_failing_query_fails_only_its_caller(clickhouse_dsn) -> None:
    config = OMConfig.model_validate(REFLECTIVE)
    conversation = talked(config)
    client = database_client(clickhouse_dsn)
    store_rows(client, conversation)
    expected = Reader(client, config)
    reader = Reader(FailingFor(client, "t7"), config)  # type: ignore[arg-type]
    threads = [(f"t{n}", f"r{n % 3}") for n in range(12)]

    got = await asyncio.gather(*(reader.status(t, r) for t, r in threads), return_exceptions=True)
    for (thread, resource), answer_ in zip(threads, got, strict=True):
        if thread == "t7":
            assert isinstance(answer_, RuntimeError)
        else:
            assert answer_ == await expected.status(thread, resource)
    assert await reader.status("t1", "r1") == await expected.status("t1", "r1"), "later batches still work"


async def test_one_batch_answers_one_thread_at_several_head_versions(clickhouse_dsn) -> None:
    config = OMConfig.model_validate(REFLECTIVE)
    conversation = talked(config)
    client = database_client(clickhouse_dsn)
    store_rows(client, conversation)
    head = Reader(client, config).resolve("t0", "r0").head
    assert head is not None and head.version > 1
    asked = [WindowRequest("r0", "t0", "thread:t0", version) for version in (0, head.version // 2, head.version)]
    asked += [WindowRequest("r1", "t1", "thread:t1", 0), WindowRequest("r0", "t1", "thread:t1", 0)]
    one_by_one = [queries.unobserved_rows(client, [request])[0] for request in asked]
    assert queries.unobserved_rows(client, asked) == one_by_one
    assert len(one_by_one[0]) > len(one_by_one[1]) > len(one_by_one[2]) and one_by_one[4] == []
