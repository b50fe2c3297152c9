"""The state changelog's record kinds (streams/state_changelog.py): written per batch, assembled on recovery."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from bench.corpus import messages
from processors.config import OMConfig
from processors.machine import KeyState
from processors.simulate import Simulation
from schemas.messages import ChatMessage
from streams.changelog_parts import BLOCK
from streams.harness.echo_model import respond
from streams.idle_schedule import IdleSchedule
from streams.record_parts import TEXTS as RECORD_TEXTS
from streams.state_changelog import (BODY, OBSERVED, RECORD, LocalChangelog, Write, body_key, drop_parts,
                                     encode_state, read_state, writes)
from streams.state_store import SpilledStates, open_parts

SMALL = {"observation": {"messageTokens": 3_000}, "reflection": {"observationTokens": 4_000}}


def _conversation(n: int) -> Iterator[ChatMessage]:
    """One thread's messages, every seventh one arriving after the next (an insert inside the window)."""
    batch = list(messages(1, n, salt="changelog"))
    for i in range(0, n - 1, 7):
        batch[i], batch[i + 1] = batch[i + 1], batch[i]
    return iter(batch)


def _run(n: int, latency_ms: int = 0) -> list[KeyState]:
    """The states one thread goes through over ``n`` messages (cycles included); with a latency the
    model's answers arrive messages later, so jobs are in flight across writes."""
    simulation = Simulation(OMConfig.from_mastra(SMALL), respond, latency_ms)
    states = []
    for message in _conversation(n):
        simulation.feed(message)
        states.append(next(iter(simulation.states.values())))
    return states


def local_changelog(data_dir: Path, capacity: int = 1_000) -> LocalChangelog:
    states = SpilledStates(open_parts(data_dir), read_state, drop_parts, capacity)
    return LocalChangelog(states, IdleSchedule(OMConfig()), {})


def _replay(data_dir: Path, records: list[Write], local: LocalChangelog | None = None,
            ) -> tuple[SpilledStates, set[str]]:
    """What recovery leaves after reading ``records``: the states (read from the parts, none
    decoded in memory) and the keys whose items the changelog lacks."""
    local = local_changelog(data_dir, capacity=1) if local is None else local
    for key, value in records:
        local.recover(orjson.loads(key), 0, value)
    local.states.trim()
    return local.states, local.unwritten


def _compacted(records: list[Write]) -> list[Write]:
    """What log compaction may leave: the newest record per key, in log order (tombstones kept)."""
    last = {key: n for n, (key, _) in enumerate(records)}
    return [r for n, r in enumerate(records) if last[r[0]] == n]


def _size(written: list[Write]) -> int:
    return sum(len(k) + len(v or b"") for k, v in written)


@pytest.mark.parametrize("latency_ms", [0, 300_000])
def test_every_state_comes_back_from_its_records_alone_and_after_compaction(tmp_path: Path, latency_ms: int):
    states, log, before = _run(900, latency_ms), [], None
    live = local_changelog(tmp_path)
    for n, state in enumerate(states):
        written = writes(state.key, before, state)
        log += written
        before = state
        _replay(tmp_path, written, live)
        assert read_state(live.states.parts, state.key) == state, f"after message {n}"
        if n % 50 == 49 or n == len(states) - 1:
            assert _replay(tmp_path, _compacted(log))[0][state.key] == state, f"compacted, after message {n}"
    assert len({s.record.generation for s in states}) >= 4, "several reflections"
    assert any(s.record.buffered_chunks for s in states) and any(s.threads for s in states)
    assert any(s.record.buffered_reflection for s in states)
    assert any(len(s.applied_cycles) == 256 for s in states) or latency_ms, "applied cycle ids fall out"
    assert any(s.in_flight for s in states) or not latency_ms, "jobs in flight across writes"


def test_bytes_written_per_message_are_those_of_what_changed():
    """A write is the message, what its cycle added (the log's new text, a new chunk or job), the
    slim state and the record's head, and a key (and perhaps a predecessor's id) per record; a text
    that changed may write its last block again."""
    states = _run(650)
    sizes, allowed = [], []
    for before, after in zip(states, states[1:]):
        written = writes(after.key, before, after)
        longest_key = max(len(k) for k, _ in written)
        record = after.record
        head = record.model_copy(update={"active_observations": "", "buffered_chunks": (),
                                         "buffered_reflection": None, "working_memory": None}).to_bytes()
        added = sum(_grown(getattr(before.record, f), getattr(record, f)) for f in RECORD_TEXTS)
        added += sum(len(x.to_bytes()) for x in (*after.window, *record.buffered_chunks, *after.in_flight)
                     if x not in (*before.window, *before.record.buffered_chunks, *before.in_flight))
        sizes.append(_size(written))
        allowed.append(added + len(encode_state(after)) + len(head) + BLOCK * len(RECORD_TEXTS)
                       + len(written) * 2 * longest_key)
    assert all(size <= bound for size, bound in zip(sizes, allowed))
    whole = [len(s.to_bytes()) for s in states]
    tenth = len(sizes) // 10
    assert max(sizes[-tenth:]) < max(whole[-tenth:]) / 2, "the largest write is not the state"
    means = [sum(sizes[n:n + tenth]) / tenth for n in range(0, 10 * tenth, tenth)]
    assert means[-1] <= max(means[:-1]), "a message costs no more late in the thread than before"


def _grown(before: str | None, after: str | None) -> int:
    old, new = (before or "").encode(), (after or "").encode()
    return 0 if old == new else len(new) - len(old) if new.startswith(old) else len(new)


def test_every_record_leaves_with_its_item_and_a_deletion_removes_everything():
    states = _run(400)
    log, before = [], None
    for state in states:
        log += writes(state.key, before, state)
        before = state
    log += writes(before.key, before, None)
    survivors = [orjson.loads(k) for k, v in _compacted(log) if v is not None]
    assert survivors == [], "the key and all its items are tombstoned"
    observed = {m.id for m in states[0].window} - {m.id for m in states[-1].window}
    assert observed, "some messages left the window"
    tombstoned = {orjson.loads(k) for k, v in log if v is None}
    assert {f"{BODY}{before.key}\x00{mid}" for mid in observed} <= tombstoned


def test_an_older_workers_full_state_is_read_and_written_whole_next_time(tmp_path: Path):
    states = _run(40)
    full = states[-1]
    data, unwritten = _replay(tmp_path, [(orjson.dumps(full.key), full.to_bytes())])
    assert data[full.key] == full and unwritten == {full.key}
    nxt = writes(full.key, full, full, whole=True)
    assert _replay(tmp_path, nxt)[0][full.key] == full, "the next write alone holds the state"


def _older_slim(state: KeyState, hinted: bool) -> list[Write]:
    """What the worker before per-item records wrote for ``state``: each body and observed id, the
    whole record, and the slim state naming its window by ids, with its other collections."""
    key = state.key
    slim = state.__pydantic_serializer__.to_json(state, exclude_none=True, exclude={"window", "record", "observed"})
    records = [(body_key(key, m.id), m.to_bytes()) for m in state.window]
    records += [(f"{OBSERVED}{key}\x00{mid}", b"%d" % at) for mid, at in state.observed.items()]
    records.append((RECORD + key, state.record.to_bytes()))
    records.append((key, (b'{"idle":"","window_ids":' if hinted else b'{"window_ids":')
                    + orjson.dumps([m.id for m in state.window]) + b',"state":' + slim + b"}"))
    return [(orjson.dumps(k), v) for k, v in records]


@pytest.mark.parametrize("hinted", [True, False])
def test_an_older_workers_slim_state_and_whole_record_are_read_and_its_items_written_next_time(
        tmp_path: Path, hinted: bool):
    states = _run(300, latency_ms=300_000)
    older = next(n for n, s in enumerate(states) if n > 150 and s.in_flight and s.record.buffered_chunks)
    log = _older_slim(states[older], hinted)
    live = local_changelog(tmp_path)
    data, unwritten = _replay(tmp_path, log, live)
    assert read_state(live.states.parts, states[older].key) == states[older] and unwritten == {states[older].key}
    for before, after in zip(states[older:], states[older + 1:]):
        log += live.writes(after.key, before, after)  # the first writes every item
        assert read_state(live.states.parts, after.key) == after
    for records in (log, _compacted(log)):
        assert _replay(tmp_path, records)[0][after.key] == after


def test_a_kept_partition_reread_from_where_it_was_keeps_the_items_it_read_before(tmp_path: Path):
    states = _run(200)
    first, last = states[30], states[-1]  # the partition was read up to first, then kept
    local = local_changelog(tmp_path)
    local.writes(first.key, None, first)
    tail = writes(last.key, first, last)  # what Faust re-reads: records after its last read position
    data, _ = _replay(tmp_path, tail, local)
    assert data[last.key] == last


def test_a_message_updated_in_the_window_is_written_again(tmp_path: Path):
    states = _run(10)
    state = states[-1]
    updated = state.window[-1].model_copy(update={"parts": [*state.window[-1].parts, *state.window[-1].parts]})
    after = state.model_copy(update={"window": (*state.window[:-1], updated)})
    data, _ = _replay(tmp_path, writes(state.key, None, state) + writes(state.key, state, after))
    assert data[state.key].window[-1] == updated


def test_observed_ids_are_written_one_by_one_and_forgotten_ones_stay_forgotten(tmp_path: Path):
    states = _run(120)
    last = states[-1]
    assert last.observed, "the run observed messages"
    forgotten = last.observed | {"an-old-id": 1}
    older = last.model_copy(update={"observed": forgotten})
    log2 = writes(last.key, None, older) + writes(last.key, older, last)
    assert _replay(tmp_path, _compacted(log2))[0][last.key].observed == last.observed
    per_write = [sum(1 for k, _ in writes(s.key, b, s) if orjson.loads(k).startswith(OBSERVED))
                 for b, s in zip(states, states[1:])]
    assert max(per_write) < len(last.observed) or len(last.observed) < 2, "not the whole set per write"


def test_collections_no_chain_can_hold_stay_in_the_slim_state_and_come_back_equal(tmp_path: Path):
    """The core makes neither, but a state must come back as it was written: a cycle id applied
    twice, a token count for a message not in the window."""
    state = next(s for s in _run(200) if len(s.applied_cycles) > 2 and s.window)
    odd = state.model_copy(update={"applied_cycles": (*state.applied_cycles, state.applied_cycles[0]),
                                   "message_tokens": {**state.message_tokens, "gone": 7}})
    log = writes(state.key, None, state) + writes(state.key, state, odd)
    assert b'"applied_cycles"' in log[-1][1] and b'"gone"' in log[-1][1]
    assert _replay(tmp_path, _compacted(log))[0][state.key] == odd
    log += writes(state.key, odd, state)  # and back to chains
    assert _replay(tmp_path, _compacted(log))[0][state.key] == state
