"""Issue 19 items 1 and 5: the reader's one-row context equals the core's own assembly, over the fuzz corpus.

Each seed of the core's interleaving fuzz (random arrivals, answers out of order, duplicates, stale
results, idle gaps, reflections, re-sent messages) is sunk into a fresh database as the sink would:
the rows of every decision, written in batches of random size, each batch rewriting the touched
keys' context rows (recomputed, or by a shortcut that must write the same row). After every batch the reader's ``context()`` (from the row, one query) must equal
:func:`processors.context.build_context` over the core's state at that point, and ``status()`` the
core's newest status event — for a reader without cache and one with the version-checked cache.
The HTTP body kept by the row's version equals that context. Writing the whole log again (a
redelivery after a crash) changes nothing. A database stored before the context rows existed gets
them when migrated. (Read-your-writes waits on the rows: test_context_waits.py.)
"""

from __future__ import annotations

import random
from dataclasses import replace

import orjson
import pytest

import tests.integration.om_pipeline as om_pipeline
import tests.unit.machine.fuzz_harness as harness
from processors.config import OMConfig
from processors.context import build_context
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage
from streams.harness.echo_model import respond
from streams.reader import Reader, ThreadNotFound
from streams.reader.context_cache import ContextCache
from streams.reader.context_json import context_json
from streams.reader.models import ContextResponse
from streams.reader import queries
from streams.reader.queries import stored_context_rows
from streams.sink.contexts import backfill, context_rows
from streams.sink.rows import Rows, delta_rows, event_rows, message_rows
from streams.sink.context_appends import PARSES
from streams.sink.row_cache import RowCache
from streams.sink.writer import write_batch
from tests.integration.om_pipeline import (
    REFLECTIVE,
    Conversation,
    core_context,
    database_client,
)
from tests.unit.machine.core_driver import T0, message

pytestmark = pytest.mark.integration
SEEDS = (0, 1, 2, 5)
"""Fuzz seeds that together run four of the fuzz's five configurations and every kind of input it
makes (:data:`FUZZ_INPUTS`; test_the_seeds_cover_the_fuzzs_configurations_and_inputs keeps it so).
The six seeds 0-5 ran the same four: seeds 3 and 4 were seed 1's configuration once more, at
~5-10 s a test on the engine for each of three tests."""
FUZZ_INPUTS = frozenset({"message", "answer ok", "answer failed", "duplicate result", "stale result", "idle tick",
                         "turn start", "turn end", "re-send"})
NOW = T0 + 86_400_000


class SunkFuzz(harness.Fuzz):
    """The fuzz, also keeping what the sink would write for each input and decision, in log order."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.rows: list[Rows] = []
        self.status = None

    def feed(self, event, label: str) -> None:
        if isinstance(event, ChatMessage):  # the messages topic, offset = position in the log
            self.rows.append(message_rows("thread:t", event.to_bytes(), len(self.rows)))
        super().feed(event, label)

    def sunk(self, decision) -> None:
        self.rows.extend(delta_rows(d.model_dump_json().encode()) for d in decision.deltas)
        for event in decision.events:
            self.rows.append(event_rows(event.key, event.to_bytes(), len(self.rows)))
            self.status = event if event.type == "status" else self.status


def fuzz_coverage(seeds, steps: int) -> tuple[set[int], set[str]]:
    """The fuzz configurations (indexes into CONFIGS) and kinds of input that ``seeds`` run, as the
    tests here run them (``steps`` steps, then every job answered); the core alone, no engine."""
    configs, inputs = set(), set()
    for seed in seeds:
        fuzz = SunkFuzz(seed, steps=steps)
        configs.add(next(i for i, c in enumerate(harness.CONFIGS) if OMConfig.model_validate(c) == fuzz.config))
        for number in range(fuzz.steps):
            fuzz.one_step(number)
        while fuzz.jobs:
            fuzz.answer(fuzz.jobs.pop(0), ok=True)
        for label in fuzz.log:
            words = label.split()
            if words[0] == "answer":
                inputs.add("answer ok" if "ok=True" in label else "answer failed")
            else:
                inputs.add(" ".join(words[:2]) if words[0] in ("turn", "idle", "duplicate", "stale") else words[0])
    return configs, inputs


@pytest.mark.parametrize("steps", [40, 50])
def test_the_seeds_cover_the_fuzzs_configurations_and_inputs(steps: int) -> None:
    configs, inputs = fuzz_coverage(SEEDS, steps)
    assert len(configs) >= 4, f"the seeds run only configurations {sorted(configs)}"
    assert inputs == FUZZ_INPUTS, f"missing: {sorted(FUZZ_INPUTS - inputs)}; unknown: {sorted(inputs - FUZZ_INPUTS)}"


def fuzz_context(fuzz: SunkFuzz, now_ms: int):
    state, observation = fuzz.state, fuzz.config.observation
    assert state is not None
    context = build_context(state.record.active_observations, list(state.window), now_ms,
                            meta=state.threads.get("t"), continuation_hints=bool(observation.continuation_hints),
                            extracted_slugs=[s.slug for s in observation.extract if s.include_previous_extraction],
                            timezone=state.record.observed_timezone)
    return replace(context, observed_through=state.record.last_observed_at)


@pytest.mark.parametrize("remembered", [False, True], ids=["stored rows queried", "stored rows remembered"])
@pytest.mark.parametrize("seed", SEEDS)
async def test_the_row_context_equals_the_core_after_every_batch(clickhouse_dsn, seed, remembered, monkeypatch) -> None:
    """``remembered``: the sink's memory of its rows (streams/sink/row_cache.py) serves the shortcuts."""
    fuzz = SunkFuzz(seed, steps=50)
    rows_cache = RowCache() if remembered else None
    decide = harness.decide
    monkeypatch.setattr(harness, "decide", lambda *args: _tap(decide(*args), fuzz))
    client = database_client(clickhouse_dsn)
    cache = ContextCache()
    readers = (Reader(client, fuzz.config), Reader(client, fuzz.config, cache=cache))
    rng = random.Random(seed)
    numbers, written, observed_states = list(range(fuzz.steps)), 0, 0
    parses_served = PARSES.hits
    while numbers or fuzz.jobs:
        if numbers:
            take = numbers[:rng.randint(1, 6)]
            numbers = numbers[len(take):]
            for number in take:
                fuzz.one_step(number)
        else:
            fuzz.answer(fuzz.jobs.pop(0), ok=True)
        write_batch(client, fuzz.rows[written:], announce=cache.written, cache=rows_cache)
        written = len(fuzz.rows)
        now = fuzz.clock + 86_400_000
        expected = fuzz_context(fuzz, now)
        for reader in readers:
            assert await reader.context("t", "r", now_ms=now) == expected, f"seed {seed}, after {written} rows"
            assert await reader.status("t", "r") == fuzz.status
            # the bodies kept by the row's version (streams/reader/api.py context_body) are this context's:
            # the model's JSON, and the lean body (the row's stored messages) validated to it without chat
            assert await reader.context_body("t", "r", now_ms=now) == context_json("t", "r", expected)
            lean = ContextResponse.model_validate_json(await reader.context_body("t", "r", chat=False, now_ms=now))
            assert lean == ContextResponse.of("t", "r", expected).model_copy(update={"chat": []}), f"seed {seed}"
        stored, = stored_context_rows(client, [("r", "thread:t")])  # a shortcut (appended, status) or not:
        assert stored[:-1] == context_rows(client, [("r", "thread:t")])[0][:-1]  # what a recompute writes
        observed_states += bool(expected.continuation) and bool(expected.messages)
    assert observed_states >= 2, "the seed must be checked with observations and a window"
    # a remembered row's window is not parsed again (streams/sink/window_parses.py)
    assert (PARSES.hits > parses_served) == remembered

    write_batch(client, fuzz.rows, announce=cache.written, cache=rows_cache)  # a redelivery of everything
    for reader in readers:
        assert await reader.context("t", "r", now_ms=now) == expected


@pytest.mark.parametrize("seed", SEEDS)
async def test_every_record_alone_keeps_the_remembered_row_equal_to_a_recompute(clickhouse_dsn, seed, monkeypatch) -> None:
    """One record per batch, with the sink's memory of its rows: a snapshot then comes without its
    status event, so a recomputed key's status is its remembered row's (streams/sink/contexts.py),
    and every shortcut and recompute must still write what a recompute from the tables writes."""
    fuzz = SunkFuzz(seed, steps=40)
    decide = harness.decide
    monkeypatch.setattr(harness, "decide", lambda *args: _tap(decide(*args), fuzz))
    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    for number in range(fuzz.steps):
        fuzz.one_step(number)
    while fuzz.jobs:
        fuzz.answer(fuzz.jobs.pop(0), ok=True)
    alone = 0
    for written, item in enumerate(fuzz.rows):
        write_batch(client, [item], cache=rows_cache)
        alone += "om_records" in item.rows and "om_events" not in item.rows
        stored, = stored_context_rows(client, [("r", "thread:t")])
        assert stored[:-1] == context_rows(client, [("r", "thread:t")])[0][:-1], f"seed {seed}, record {written}"
    assert alone >= 2, "the seed must write snapshots without their status"
    # the shortcut's doubts are asked of the tables once, then of the sink's memory
    # (streams/sink/stored_versions.py); a deletion drops that memory
    assert rows_cache.versions.loads <= 1 + sum(item.deletion is not None for item in fuzz.rows) < len(fuzz.rows) / 10


def test_a_recomputed_key_keeps_its_thread_lists_from_memory_only_without_new_messages(clickhouse_dsn) -> None:
    """Resource scope, a speaking thread and a system-only one: a snapshot alone takes the remembered
    row's thread lists (the system thread listed, not speaking); a snapshot that comes with a message
    in a new thread asks the tables for them (streams/sink/contexts.py)."""
    conversation = Conversation(OMConfig.model_validate({"scope": "resource", "observation": {"messageTokens": 200}}))
    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    key, offset = ("r", "resource:r"), 0

    def fed(msg: ChatMessage) -> tuple[Rows, list[Rows], list[Rows]]:
        nonlocal offset
        records, events = len(conversation.records), len(conversation.events)
        conversation.feed(msg)
        offset += 1
        return (message_rows(b"resource:r", msg.to_bytes(), offset, None, "resource"),
                [delta_rows(d.model_dump_json().encode()) for _, d in conversation.records[records:]],
                [event_rows(k, e.to_bytes(), offset * 100 + n) for n, (k, e) in enumerate(conversation.events[events:])])

    def equal_to_a_recompute(what: str) -> None:
        stored, = stored_context_rows(client, [key])
        assert stored[:-1] == context_rows(client, [key])[0][:-1], what

    snapshots = 0
    turns = [("a", "user"), ("s", "system"), ("a", "assistant")] * 4
    for n, (thread, role) in enumerate(turns):
        row, records, events = fed(message(f"{thread}{n}", T0 + n * 60_000, role=role, thread=thread, resource="r",
                                           text=" ".join(["words"] * 150)))
        for item in [row, *events, *records]:  # each alone; the snapshots last, after their status
            write_batch(client, [item], cache=rows_cache)
            snapshots += "om_records" in item.rows
            equal_to_a_recompute(f"message {n}, alone")
    assert snapshots >= 2
    stored, = stored_context_rows(client, [key])
    assert stored[8] == ["a", "s"] and stored[9] == ["a"], "the system-only thread is listed, not speaking"

    row, records, events = fed(message("b0", T0 + 10 * 60_000, thread="b", resource="r", text=" ".join(["more"] * 150)))
    assert records, "the message must change the record for this check"
    write_batch(client, [*records, row, *events], cache=rows_cache)  # a snapshot with a message of a new thread
    equal_to_a_recompute("a new thread's message with a snapshot")


def test_a_remembered_row_is_brought_forward_by_snapshots_as_a_recompute_would(clickhouse_dsn, monkeypatch) -> None:
    """Thread scope, buffered and synchronous observation, an Observer that keeps a working memory
    block: every snapshot moves the remembered row's head, drops what its observations cover and
    takes its block, and an observed copy of a message changes nothing the head does not
    (streams/sink/context_appends.py), without the recompute's queries; each row stored equals a
    recompute. Records are written one per batch (a message alone, its events, then each delta),
    then all of them in one batch (a redelivery: nothing moves)."""
    def respond_with_memory(job):
        result = respond(job)
        if isinstance(job, ObserveJob):
            return result.model_copy(update={"extracted_values": {"working-memory": f"# Memory\n- cycle {job.cycle_id}"}})
        return result

    monkeypatch.setattr(om_pipeline, "respond", respond_with_memory)
    conversation = Conversation(OMConfig.model_validate({"observation": {"messageTokens": 400,
                                                                         "manageWorkingMemory": True}}))
    client, rows_cache = database_client(clickhouse_dsn), RowCache()
    key, offset, everything, recomputed = ("r", "thread:t"), 0, [], 0
    head_rows = queries.head_rows

    def counted(*args):
        nonlocal recomputed
        recomputed += 1
        return head_rows(*args)

    memories, shrank, longest = set(), 0, 0
    for n in range(24):
        offset += 1
        batch = conversation.sunk_turn(n, offset)
        everything += batch
        for item in batch:
            monkeypatch.setattr(queries, "head_rows", counted)
            write_batch(client, [item], cache=rows_cache)
            monkeypatch.setattr(queries, "head_rows", head_rows)
            stored, = stored_context_rows(client, [key])
            assert stored[:-1] == context_rows(client, [key])[0][:-1], f"message {n}"
            window = sum(len(w) for w in orjson.loads(stored[7]).values())
            shrank += window < longest
            longest = window
            memories.add(stored[3])
    assert len(memories - {None}) >= 2, "the Observer's blocks must reach the rows"
    assert shrank >= 2, "observations must take messages out of the window"
    assert recomputed == 0, "no row is recomputed: the first starts empty, every snapshot brings the row forward"
    write_batch(client, everything, cache=rows_cache)
    stored, = stored_context_rows(client, [key])
    assert stored[:-1] == context_rows(client, [key])[0][:-1], "a redelivery of everything"


def _tap(decision, fuzz: SunkFuzz):
    fuzz.sunk(decision)
    return decision


async def test_a_database_from_before_the_context_rows_gets_them_when_migrated(clickhouse_dsn) -> None:
    conversation = Conversation(OMConfig.model_validate(REFLECTIVE))
    conversation.talk(40, thread="t", resource="r")
    client = database_client(clickhouse_dsn)
    write_batch(client, [*(message_rows(k, m.to_bytes(), n) for n, (k, m) in enumerate(conversation.messages)),
                         *(delta_rows(d.model_dump_json().encode()) for _, d in conversation.records),
                         *(event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events))])
    client.command("TRUNCATE TABLE om_contexts")  # as stored before migration 008
    with pytest.raises(ThreadNotFound):
        await Reader(client, conversation.config).context("t", "r")
    assert backfill(client) == 1
    assert await Reader(client, conversation.config).context("t", "r", now_ms=NOW) == core_context(conversation, "t", NOW)
    assert backfill(client) == 0, "filled once"
