"""The state changelog's record kinds (streams/state_changelog.py): written per batch, assembled on recovery."""

from __future__ import annotations

import statistics
from pathlib import Path

import orjson

from bench.corpus import messages
from processors.config import OMConfig
from processors.machine import KeyState
from processors.simulate import Simulation
from streams.harness.echo_model import respond
from streams.idle_schedule import IdleSchedule
from streams.state_changelog import BODY, LocalChangelog, drop_parts, read_state, writes
from streams.state_store import SpilledStates, open_parts


def _run(n: int) -> list[KeyState]:
    """The states one thread goes through over ``n`` messages (cycles included)."""
    simulation = Simulation(OMConfig.from_mastra({"observation": {"messageTokens": 3_000},
                                                  "reflection": {"observationTokens": 4_000}}), respond)
    states = []
    for message in messages(1, n, salt="changelog"):
        simulation.feed(message)
        states.append(next(iter(simulation.states.values())))
    return states


def local_changelog(data_dir: Path, capacity: int = 1_000) -> LocalChangelog:
    states = SpilledStates(open_parts(data_dir), read_state, drop_parts, capacity)
    return LocalChangelog(states, IdleSchedule(OMConfig()), {})


def _replay(data_dir: Path, records: list[tuple[bytes, bytes | None]], local: LocalChangelog | None = None,
            ) -> tuple[SpilledStates, set[str]]:
    """What recovery leaves after reading ``records``: the states (read from the parts, none
    decoded in memory) and the keys whose bodies the changelog lacks."""
    local = local_changelog(data_dir, capacity=1) if local is None else local
    for key, value in records:
        local.recover(orjson.loads(key), 0, value)
    local.states.trim()
    return local.states, local.unwritten


def _compacted(records: list[tuple[bytes, bytes | None]]) -> list[tuple[bytes, bytes | None]]:
    """What log compaction may leave: the newest record per key, in log order (tombstones kept)."""
    last = {key: n for n, (key, _) in enumerate(records)}
    return [r for n, r in enumerate(records) if last[r[0]] == n]


def test_every_state_comes_back_from_its_records_alone_and_after_compaction(tmp_path: Path):
    states, log, before = _run(120), [], None
    for n, state in enumerate(states):
        log += writes(state.key, before, state)
        before = state
        for records in (log, _compacted(log)):
            data, _ = _replay(tmp_path, records)
            assert data[state.key] == state, f"after message {n}"


def test_bytes_written_per_message_do_not_grow_with_the_window():
    states = _run(200)
    sizes = []
    before = None
    for state in states:
        sizes.append(sum(len(k) + len(v or b"") for k, v in writes(state.key, before, state)))
        before = state
    whole = [len(s.to_bytes()) for s in states]
    assert max(whole[100:]) > 20 * 1024, "the thread's window is long enough to tell"
    # a write is the slim state plus one body (plus the record when a cycle changed it): far below
    # the whole state. What still grows is the slim state's observed ids (kept 24 h of event time).
    assert statistics.median(sizes[100:]) < statistics.median(whole[100:]) / 3
    assert sum(sizes) < sum(whole) / 2


def test_bodies_leave_with_their_messages_and_a_deletion_removes_everything():
    states = _run(120)
    log, before = [], None
    for state in states:
        log += writes(state.key, before, state)
        before = state
    log += writes(before.key, before, None)
    survivors = [k for k, v in _compacted(log) if v is not None]
    assert survivors == [], "the key and all its bodies are tombstoned"
    observed = {m.id for m in states[0].window} - {m.id for m in states[-1].window}
    assert observed, "some messages left the window"
    tombstoned = {orjson.loads(k) for k, v in log if v is None}
    assert {f"{BODY}{before.key}\x00{mid}" for mid in observed} <= tombstoned


def test_an_older_workers_full_state_is_read_and_its_window_written_whole_next_time(tmp_path: Path):
    states = _run(40)
    full = states[-1]
    data, unwritten = _replay(tmp_path, [(orjson.dumps(full.key), full.to_bytes())])
    assert data[full.key] == full and unwritten == {full.key}
    nxt = writes(full.key, full, full, whole_window=True)
    assert len(nxt) == len(full.window) + len(full.observed) + 2, "every body and observed id, the record, the state"
    assert _replay(tmp_path, nxt)[0][full.key] == full


def test_a_kept_partition_reread_from_where_it_was_keeps_the_bodies_it_read_before(tmp_path: Path):
    states = _run(60)
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
    log, before = [], None
    for state in states:
        log += writes(state.key, before, state)
        before = state
    forgotten = last.observed | {"an-old-id": 1}
    older = last.model_copy(update={"observed": forgotten})
    log2 = writes(last.key, None, older) + writes(last.key, older, last)
    assert _replay(tmp_path, _compacted(log2))[0][last.key].observed == last.observed
    per_write = [sum(1 for k, _ in writes(s.key, b, s) if orjson.loads(k).startswith("\x00o\x00"))
                 for b, s in zip(states, states[1:])]
    assert max(per_write) < len(last.observed) or len(last.observed) < 2, "not the whole set per write"
