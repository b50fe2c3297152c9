"""A batch starts while the batch before it is still being inserted (streams/sink/writer.py).

The sink announces a batch's shortcut rows before the batch before it has landed
(:func:`streams.sink.writer.prepare_batch` with that batch ``behind``), so a read-your-writes
wait does not queue behind the previous batch's inserts. What must hold: the rows stored are
what a recompute from the tables writes, wherever in the batch before's inserts the start ran
(the tables may hold none, some or all of that batch); and a start built on a batch whose write
then failed is withdrawn and done again once that batch has landed.

The batches are the core's interleaving fuzz, sunk as in ``test_context_rows.py``; the start of
each batch runs inside the write of the one before, at a random one of its statements.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import tests.unit.machine.fuzz_harness as harness
from streams.reader.context_cache import ContextCache
from streams.reader.queries import stored_context_rows
from streams.sink.contexts import context_rows
from streams.sink.row_cache import RowCache
from processors.config import OMConfig
from streams.sink.rows import Rows
from streams.sink.writer import InFlight, Prepared, prepare_batch, write_batch
from tests.integration.om_pipeline import Conversation, database_client
from tests.integration.test_context_rows import FUZZ_INPUTS, SunkFuzz, _tap, fuzz_coverage

pytestmark = pytest.mark.integration
KEY = ("r", "thread:t")


class Interleaving:
    """The client, running ``then`` just before the statement numbered ``at`` of a write (None: after
    the write); ``then`` uses the plain client, as the sink's other thread would."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.at: int | None = None
        self.then: Any = None
        self.seen = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def _step(self) -> None:
        if self.then is not None and self.seen == self.at:
            then, self.then = self.then, None
            then()
        self.seen += 1

    def insert(self, *args: Any, **kwargs: Any) -> Any:
        self._step()
        return self.client.insert(*args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        self._step()
        return self.client.command(*args, **kwargs)

    def query(self, *args: Any, **kwargs: Any) -> Any:
        self._step()
        return self.client.query(*args, **kwargs)


def _batches(seed: int, monkeypatch, largest: int = 3) -> list[list[Rows]]:
    fuzz = SunkFuzz(seed, steps=50)
    decide = harness.decide
    monkeypatch.setattr(harness, "decide", lambda *args: _tap(decide(*args), fuzz))
    rng = random.Random(seed)
    for number in range(fuzz.steps):
        fuzz.one_step(number)
    while fuzz.jobs:
        fuzz.answer(fuzz.jobs.pop(0), ok=True)
    batches, at = [], 0
    while at < len(fuzz.rows):
        size = rng.randint(1, largest)
        batches.append(fuzz.rows[at:at + size])
        at += size
    return batches


FUZZ_SEEDS = (0, 1, 2)
"""Together they run three of the fuzz's configurations and every kind of input it makes (checked
below); seed 3, run here before, was seed 1's configuration again, at ~4-9 s a test."""


def test_the_fuzz_seeds_cover_three_configurations_and_every_kind_of_input() -> None:
    configs, inputs = fuzz_coverage(FUZZ_SEEDS, 50)
    assert len(configs) >= 3 and inputs == FUZZ_INPUTS, (sorted(configs), sorted(FUZZ_INPUTS ^ inputs))


@pytest.mark.parametrize("largest", [1, 3], ids=["a record per batch", "up to 3 records"])
@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_each_batch_started_during_the_write_before_it_stores_what_a_recompute_writes(clickhouse_dsn, seed, largest,
                                                                                      monkeypatch) -> None:
    """The fuzz: arrivals, answers out of order, duplicates, stale results, re-sent messages."""
    _write_each_started_during_the_one_before(database_client(clickhouse_dsn), _batches(seed, monkeypatch, largest),
                                              random.Random(seed))


@pytest.mark.parametrize("seed", range(3))
def test_a_buffered_conversation_each_batch_started_before_the_one_before_lands(clickhouse_dsn, seed) -> None:
    """Buffered observation, batches of one to four records, each started before any row of the one
    before is inserted: an activation's head move (observation rows, the observed copies, the
    snapshot: in that order) must count the observation rows of the batch before it, which the
    tables do not hold yet."""
    conversation = Conversation(OMConfig.model_validate({"observation": {"messageTokens": 400}}))
    records_by_one = [item for n in range(24) for item in conversation.sunk_turn(n, n + 1)]
    rng, batches = random.Random(seed), []
    while records_by_one:
        size = rng.randint(1, 4)
        batches.append(records_by_one[:size])
        records_by_one = records_by_one[size:]
    _write_each_started_during_the_one_before(database_client(clickhouse_dsn), batches, None)


def _write_each_started_during_the_one_before(client: Any, batches: list[list[Rows]], rng: random.Random | None) -> None:
    """Each batch written with its start (:func:`prepare_batch`) done inside the write of the one
    before, just before one of its statements (``rng``'s choice, mostly the first; None: always the
    first); every stored row must equal a recompute."""
    rows_cache, cache, interleaving = RowCache(), ContextCache(), Interleaving(client)
    prepared: Prepared = prepare_batch(client, batches[0], landing=cache.landing, cache=rows_cache)
    started_inside = 0
    for n, batch in enumerate(batches):
        following = batches[n + 1] if n + 1 < len(batches) else None
        started: list[Prepared] = []
        behind = prepared.in_flight()
        if following is not None:
            def start(following=following, behind=behind, started=started) -> None:
                started.append(prepare_batch(client, following, landing=cache.landing, cache=rows_cache,
                                             behind=behind))
            at = rng.choice([0, 0, 0, rng.randint(1, 8)]) if rng is not None else 0  # mostly before any of its rows
            interleaving.at, interleaving.then, interleaving.seen = at, start, 0
        write_batch(interleaving, batch, announce=cache.written, cache=rows_cache, landing=cache.landing,
                    prepared=prepared)
        started_inside += bool(started)
        if following is not None and not started:  # the write had fewer statements: start it after
            interleaving.then()
        stored, = stored_context_rows(client, [KEY])
        assert stored[:-1] == context_rows(client, [KEY])[0][:-1], f"after batch {n}"
        if following is not None:
            prepared = started[0]
    assert started_inside >= len(batches) // 3, "most starts must run inside the write before"


@pytest.mark.parametrize("seed", range(3))
def test_batches_started_one_behind_another_then_written_as_one(clickhouse_dsn, seed, monkeypatch) -> None:
    """The sink starts every batch it collects while a write is under way, each counting all the
    batches not yet landed, and writes the started ones together once that write ends
    (``Prepared.merged``): every stored row equals a recompute, and every event is handed to the
    waits once (one handed early, again once inserted)."""
    client, rows_cache, cache = database_client(clickhouse_dsn), RowCache(), ContextCache()
    rng, batches = random.Random(seed), _batches(seed, monkeypatch, 2)
    handed: list[int] = []
    stored = lambda events: handed.extend(id(event) for event in events)  # noqa: E731
    at, merged = 0, 0
    while at < len(batches):
        group = batches[at:at + rng.randint(1, 4)]
        at += len(group)
        started: list[Prepared] = []
        for batch in group:
            started.append(prepare_batch(client, batch, landing=cache.landing, stored=stored, cache=rows_cache,
                                         behind=InFlight.of(started)))
        merged += len(group) > 1 and all(p.start is not None and p.start.rows for p in started)
        write_batch(client, [item for batch in group for item in batch], announce=cache.written, stored=stored,
                    cache=rows_cache, landing=cache.landing, prepared=Prepared.merged(started))
        stored_row, = stored_context_rows(client, [KEY])
        assert stored_row[:-1] == context_rows(client, [KEY])[0][:-1], f"seed {seed}, after batch {at}"
        events = [id(row) for batch in group for item in batch for row in item.rows.get("om_events", ())]
        assert set(handed) == set(events), "every event handed to the waits"
        assert all(handed.count(event) <= 2 for event in events), "once, and an early one again once inserted"
        handed.clear()
    assert merged >= 3, "several groups of started batches must be written as one"


def test_a_start_built_on_a_batch_whose_write_failed_is_withdrawn_and_done_again(clickhouse_dsn,
                                                                                monkeypatch) -> None:
    client, rows_cache, cache = database_client(clickhouse_dsn), RowCache(), ContextCache()
    batches = _batches(1, monkeypatch)
    for batch in batches[:4]:
        write_batch(client, batch, announce=cache.written, cache=rows_cache, landing=cache.landing)
    failing, following = batches[4], batches[5]
    withdrawn: list[str] = []

    def withdraw(keys) -> None:
        withdrawn.extend(keys)
        cache.forget(keys)

    class Refusing:
        """The client, refusing every insert (ClickHouse went away mid-batch)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

        def insert(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("gone")

        def command(self, sql: str, *args: Any, **kwargs: Any) -> Any:
            if sql.startswith("INSERT"):
                raise ConnectionError("gone")
            return client.command(sql, *args, **kwargs)

    first = prepare_batch(client, failing, landing=cache.landing, cache=rows_cache)
    assert first.early, "the batch's row is announced before its write"
    second = prepare_batch(client, following, landing=cache.landing, cache=rows_cache, behind=first.in_flight())
    assert second.early, "and so is the next batch's, built on it"
    with pytest.raises(ConnectionError):
        write_batch(Refusing(), failing, announce=cache.written, cache=rows_cache, landing=cache.landing,
                    withdraw=withdraw, prepared=first)
    assert withdrawn == list(first.early)
    assert cache.get(KEY[1]) is None, "the reader no longer serves the failed batch's row"
    write_batch(client, failing, announce=cache.written, cache=rows_cache, landing=cache.landing, withdraw=withdraw)
    withdrawn.clear()
    write_batch(client, following, announce=cache.written, cache=rows_cache, landing=cache.landing,
                withdraw=withdraw, prepared=second)
    assert withdrawn == list(second.early), "the start built on the failed write is withdrawn, then done again"
    stored, = stored_context_rows(client, [KEY])
    assert stored[:-1] == context_rows(client, [KEY])[0][:-1]
    again = prepare_batch(client, batches[6], cache=rows_cache, behind=second.in_flight())
    assert again.start is None, "a start behind a write whose memory was dropped announces nothing"


# A conversation published at once reaches the sink's consumer as one fetch per topic, in either
# order. Split across two batches (its events, then its messages), its keys are left to the write's
# recompute and never announced early, which is right but not what the two tests below look at; a
# linger long enough for the second fetch keeps each conversation whole (a batch holding every
# message's fold closes at once whatever the linger: streams/sink/fold_gaps.py).
WHOLE = {"max_wait_ms": 200, "linger_ms": 200}


async def test_the_sink_announces_a_batch_while_the_one_before_is_still_being_inserted(kafka_bootstrap, clickhouse_dsn,
                                                                                       new_topic) -> None:
    """The real loop (streams/sink/service.py): while a batch's insert is held, the next batches
    are collected and their rows announced, each counting the ones before; once the hold is let go
    they land, in order, as a recompute would write them."""
    import asyncio
    import threading

    from streams.sink.service import Sink, SinkOptions
    from tests.integration.om_pipeline import FAST_SINK, HoldingInserts, make_topics, publish, wait_committed

    client = database_client(clickhouse_dsn)
    topics = await make_topics(new_topic, partitions=1)
    released, reached, announced = threading.Event(), threading.Event(), threading.Event()

    seen: set[str] = set()

    def landing(rows) -> None:
        seen.update(row[0] for row in rows)
        if {"thread:b", "thread:c"} <= seen:
            announced.set()

    first, second, third = Conversation(OMConfig()), Conversation(OMConfig()), Conversation(OMConfig())
    first.talk(4, thread="a", resource="r")
    second.talk(4, thread="b", resource="r")
    third.talk(4, thread="c", resource="r")
    holding = HoldingInserts(client, "om_messages", released, reached)
    sink = Sink(holding, kafka_bootstrap, topics, SinkOptions(group_id=f"sink-{new_topic.__name__}-pipe",
                                                              consumer=FAST_SINK, landing=landing, **WHOLE))
    await sink.start()
    try:
        await _assigned(sink)
        consumer, idle = sink._consumer, asyncio.Event()
        fetch = consumer.getmany

        async def watched(*args: Any, **kwargs: Any) -> Any:
            got = await fetch(*args, **kwargs)
            if reached.is_set() and not got:
                idle.set()
            return got
        consumer.getmany = watched
        total = await publish(kafka_bootstrap, topics, first)
        assert await asyncio.to_thread(reached.wait, 30), "the first batch's insert began"
        for conversation in (second, third):  # each after the sink found nothing more for a while
            idle.clear()
            await asyncio.wait_for(idle.wait(), 10)
            total += await publish(kafka_bootstrap, topics, conversation)
        assert await asyncio.to_thread(announced.wait, 20), "the next batches were announced while the insert was held"
        assert not released.is_set()
        released.set()
        await wait_committed(kafka_bootstrap, sink.options.group_id, topics, total, 60)
    finally:
        released.set()
        await sink.stop()
    for key in (("r", "thread:a"), ("r", "thread:b"), ("r", "thread:c")):
        stored, = stored_context_rows(client, [key])
        assert stored[:-1] == context_rows(client, [key])[0][:-1], key


async def test_with_gather_ms_started_batches_are_announced_at_once_and_written_together(kafka_bootstrap,
                                                                                        clickhouse_dsn,
                                                                                        new_topic) -> None:
    """``gather_ms`` (the embedded worker's): batches collected one after another are each announced
    as they come, and written as one write once the oldest has waited ``gather_ms``, or at once
    when a read of the tables waits for them."""
    import asyncio
    import threading

    from streams.sink.service import Sink, SinkOptions
    from tests.integration.om_pipeline import FAST_SINK, make_topics, publish, wait_committed

    client = database_client(clickhouse_dsn)
    topics = await make_topics(new_topic, partitions=1)
    inserts: list[int] = []  # rows per om_messages insert
    seen: list[tuple[str, int]] = []  # (lookup key, om_messages inserts made when it was announced)
    lock = threading.Lock()

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

        def insert(self, table: str, data: Any, *args: Any, **kwargs: Any) -> Any:
            if table == "om_messages":
                with lock:
                    inserts.append(len(data))
            return client.insert(table, data, *args, **kwargs)

        def command(self, sql: str, *args: Any, **kwargs: Any) -> Any:
            if sql.startswith("INSERT INTO om_messages"):
                with lock:
                    inserts.append(sql.count("\n"))
            return client.command(sql, *args, **kwargs)

    def landing(rows) -> None:
        with lock:
            seen.extend((row[0], len(inserts)) for row in rows)

    conversations = [Conversation(OMConfig()) for _ in range(3)]
    for conversation, thread in zip(conversations, "abc", strict=True):
        conversation.talk(2, thread=thread, resource="r")
    sink = Sink(Counting(), kafka_bootstrap, topics, SinkOptions(group_id=f"sink-{new_topic.__name__}-gather",
                                                                consumer=FAST_SINK, landing=landing,
                                                                gather_ms=5000, **WHOLE))
    await sink.start()
    total = 0
    try:
        await _assigned(sink)
        for conversation, thread in zip(conversations, "abc", strict=True):
            total += await publish(kafka_bootstrap, topics, conversation)
            deadline = asyncio.get_running_loop().time() + 10
            while not any(key == f"thread:{thread}" for key, _ in seen):
                assert asyncio.get_running_loop().time() < deadline, f"thread {thread} was never announced"
                await asyncio.sleep(0.01)
        assert all(made == 0 for _, made in seen), "each batch announced before any was written"
        # a read of the tables (recall) waits for what was announced to be in them, and ends the
        # gather: the write is made now, not when the oldest batch has waited 5 s (streams/sink/landings.py)
        asked = asyncio.get_running_loop().time()
        landed = asyncio.ensure_future(sink.landings.landed(timeout_s=30))
        for _ in range(3):
            await asyncio.sleep(0)
        assert not landed.done(), "the writes were still gathering"
        await asyncio.wait_for(landed, 30)
        assert inserts, "landed once the gathered write was made"
        assert asyncio.get_running_loop().time() - asked < 3, "the read's wait ended the gather"
        assert len(messages_in(client)) == sum(len(c.messages) for c in conversations)
        await wait_committed(kafka_bootstrap, sink.options.group_id, topics, total, 30)
    finally:
        await sink.stop()
    assert len(inserts) == 1, f"the three batches gathered into one write, not {len(inserts)}"
    for thread in "abc":
        stored, = stored_context_rows(client, [("r", f"thread:{thread}")])
        assert stored[:-1] == context_rows(client, [("r", f"thread:{thread}")])[0][:-1], thread


def messages_in(client: Any) -> list[tuple[str, str]]:
    return client.query("SELECT DISTINCT thread_id, id FROM om_messages").result_rows


async def _assigned(sink: Any, deadline_s: float = 30.0) -> None:
    """Until the sink's consumer has its partitions (a fresh broker's group coordinator can take a
    while; a rebalance in the middle would rightly drop what was started, not what these tests check)."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + deadline_s
    while not sink._consumer.assignment():
        assert loop.time() < deadline, "the sink was never assigned its partitions"
        await asyncio.sleep(0.02)
