"""Key states past RAM (streams/state_store.py): a fold over spilled states is the fold over a dict,
recovery refills the local store from the changelog alone, and dead processes' stores go."""

from __future__ import annotations

import fcntl
from pathlib import Path

import orjson

from bench.corpus import messages
from processors.config import OMConfig
from processors.machine import KeyState, event_key
from schemas.jobs import decode_job
from streams.fold import BatchFolder, FoldResult, InputRecord
from streams.harness.echo_model import respond
from streams.idle_schedule import IdleSchedule
from streams.state_changelog import LocalChangelog, drop_parts, read_state
from streams import state_store
from streams.state_store import SpilledStates, open_parts, state_dir
from streams.topics import Topics

TOPICS = Topics.for_prefix("om")
CONFIG = OMConfig.model_validate({"observation": {"message_tokens": 1_500},
                                  "reflection": {"observation_tokens": 1_200, "activate_after_idle": "5m"}})
NOW = 1_733_000_000_000


def local(data_dir: Path, capacity: int) -> LocalChangelog:
    states = SpilledStates(open_parts(data_dir), read_state, drop_parts, capacity)
    return LocalChangelog(states, IdleSchedule(CONFIG), {})


def fold_corpus(states, on_batch=None) -> tuple[list[FoldResult], list]:
    """Six threads' messages in batches of 7, each batch's jobs answered in the next batch."""
    folder = BatchFolder(CONFIG, TOPICS, clock=lambda: NOW / 1000)
    pending: list[InputRecord] = []
    results, offset = [], 0
    corpus = [(event_key(m, CONFIG).encode(), m.to_bytes()) for m in messages(6, 45, salt="spill")]
    while corpus or pending:
        batch, corpus = corpus[:7], corpus[7:]
        records = pending + [InputRecord(TOPICS.messages, 0, offset + i, key, value, NOW) for i, (key, value) in
                             enumerate(batch)]
        offset += len(records)
        result = folder.fold(records, states)
        if on_batch is not None:
            on_batch(result)
        pending = [InputRecord(TOPICS.results, 0, 0, o.key, respond(decode_job(o.value)).to_bytes(), NOW)
                   for o in result.outgoing if o.topic == TOPICS.jobs]
        results.append(result)
    return results, [states[k] for k in sorted(states)]


def test_a_fold_over_spilled_states_is_the_fold_over_a_dict_and_recovery_gives_it_back(tmp_path: Path) -> None:
    expected_results, expected = fold_corpus({})
    spilled, log = local(tmp_path, capacity=20), []

    def write(result: FoldResult) -> None:
        for key in [*result.changed, *result.deleted]:
            log.extend(spilled.writes(key, result.before.get(key), spilled.states.get(key)))
        spilled.states.trim()
        assert spilled.states.used <= 20, "every state is written: the LRU keeps to its bound"

    results, states = fold_corpus(spilled.states, write)
    assert [[(o.topic, o.key, o.value) for o in r.outgoing] for r in results] == \
        [[(o.topic, o.key, o.value) for o in r.outgoing] for r in expected_results]
    assert states == expected and len(expected) == 6
    assert spilled.states.reads > 50, "states were read back from the local store, not only from memory"
    assert any(s.record.active_observations for s in expected), "the corpus ran observation cycles"

    recovered = local(tmp_path, capacity=1_000)
    for key, value in log:
        recovered.recover(orjson.loads(key), 0, value)
    assert [recovered.states[k] for k in sorted(recovered.states)] == expected


def test_a_state_leaves_memory_only_once_written(tmp_path: Path) -> None:
    states = local(tmp_path, capacity=3).states
    state = KeyState.from_obj({"key": "thread:a", "record": _record("thread:a")})
    for key in ("thread:a", "thread:b", "thread:c", "thread:d", "thread:e"):
        states[key] = state.model_copy(update={"key": key})
    states.trim()
    assert states.used == 5, "nothing was written: every state stays"
    for key in ("thread:a", "thread:b"):
        states.written(key)
    states.trim()
    assert states.used == 3 and set(states) == {"thread:a", "thread:b", "thread:c", "thread:d", "thread:e"}


def test_a_moved_key_is_forgotten_with_its_parts(tmp_path: Path) -> None:
    changelog = local(tmp_path, capacity=100)
    _, expected = fold_corpus(changelog.states, lambda r: [changelog.writes(k, r.before.get(k), changelog.states.get(k))
                                                           for k in r.changed])
    key = expected[0].key
    assert any(True for _ in changelog.states.parts.scan(f"\x00m\x00{key}\x00"))
    changelog.states.discard(key)
    assert key not in changelog.states and changelog.states.get(key) is None
    assert not any(True for _ in changelog.states.parts.scan(f"\x00m\x00{key}\x00"))
    assert changelog.states.parts.get(key) is None and changelog.states.parts.get(f"\x00r\x00{key}") is None


def test_a_dead_processs_store_is_removed_at_the_next_start_and_a_live_ones_kept(tmp_path: Path) -> None:
    live = open_parts(tmp_path)
    dead = state_dir(tmp_path) / "4242-dead"
    (dead / "db").mkdir(parents=True)
    (dead / "lock").touch()
    with open(dead / "lock", "a") as held_elsewhere:  # released: its process is gone
        fcntl.flock(held_elsewhere, fcntl.LOCK_EX)
    mine = open_parts(tmp_path)
    assert not dead.exists()
    assert live.path.exists() and mine.path.exists() and live.path != mine.path
    mine.close()
    assert not mine.path.exists()


def test_no_worker_sweeps_while_another_makes_its_directory(tmp_path: Path, monkeypatch) -> None:
    """A worker starting beside this one (another open file of the sweep lock) finds the lock taken
    from before this one's directory exists until it is locked: it cannot sweep it unlocked."""
    root = state_dir(tmp_path)
    seen: list[bool] = []
    made = state_store.tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        path = made(*args, **kwargs)
        with open(root / state_store.SWEEP_LOCK, "a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                seen.append(False)  # another worker could sweep now: the directory has no lock yet
                state_store._unheld_checkpoint(Path(path), "", 0)  # and would take it away
            except BlockingIOError:
                seen.append(True)
        return path

    monkeypatch.setattr(state_store.tempfile, "mkdtemp", mkdtemp)
    store = open_parts(tmp_path)
    assert seen == [True] and store.path.exists()
    store.close()
    with open(root / state_store.SWEEP_LOCK, "a") as after:  # released once the directory is locked
        fcntl.flock(after, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _record(key: str) -> dict:
    return {"id": f"rec-{key}", "key": key, "scope": "thread", "thread_id": key.split(":")[1],
            "resource_id": "r", "created_at": NOW, "updated_at": NOW}
