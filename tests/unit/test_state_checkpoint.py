"""A worker's local store kept across a clean stop (streams/state_checkpoint.py): kept only when it
holds committed records alone, adopted by the next start of the same changelog with every state,
and dropped where the changelog can no longer vouch for it."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path

from streams import metrics, state_checkpoint
from streams.idle_schedule import IdleSchedule
from streams.state_changelog import LocalChangelog, drop_parts, read_state
from streams.state_checkpoint import Checkpoint, CommitTracker
from streams.state_store import SpilledStates, open_parts, state_dir
from tests.unit.test_state_store import CONFIG, fold_corpus

TOPIC = "om-processor-om-state-changelog"


def local(data_dir: Path, topic: str = TOPIC, capacity: int = 20) -> LocalChangelog:
    owners: dict[str, int] = {}
    states = SpilledStates(open_parts(data_dir, topic), read_state, drop_parts, capacity)
    return LocalChangelog(states, IdleSchedule(CONFIG), {}, topic, owners)


def folded(changelog: LocalChangelog, *, commit: bool = True) -> list:
    """The corpus folded as the worker does: each batch's records sent in partition 0's (or, for the
    odd keys, 1's) transaction at the next offsets, committed unless ``commit`` is off."""
    offsets = {0: 99, 1: 49}

    def write(result) -> None:
        for key in [*result.changed, *result.deleted]:
            partition = sorted(result.changed).index(key) % 2 if key in result.changed else 0
            changelog.owners[key] = changelog.owners.get(key, partition)  # type: ignore[index]
            sent = changelog.writes(key, result.before.get(key), changelog.states.get(key))
            offsets[changelog.owners[key]] += len(sent)  # type: ignore[index]
            changelog.tracker.sent(f"tid-{changelog.owners[key]}", changelog.owners[key],  # type: ignore[index]
                                   offsets[changelog.owners[key]])  # type: ignore[index]
        changelog.states.trim()
        if commit:
            changelog.tracker.committed("tid-0")
            changelog.tracker.committed("tid-1")

    _, states = fold_corpus(changelog.states, write)
    return states


def test_a_clean_stop_keeps_the_store_and_the_next_start_adopts_every_state(tmp_path: Path) -> None:
    before = local(tmp_path)
    expected = folded(before)
    idle = before.schedule.snapshot()
    assert idle, "the corpus's states have idle checks to keep"
    before.states.parts.exit()
    kept = before.states.parts.path
    assert (kept / state_checkpoint.FILE).exists()

    after = local(tmp_path)
    assert after.states.parts.path == kept, "the kept store is adopted"
    assert not (kept / state_checkpoint.FILE).exists(), "its checkpoint is taken before anything is written"
    offsets = before.tracker.offsets
    assert set(offsets) == {0, 1}
    assert after.adopt({p: (-1, o + 10) for p, o in offsets.items()}) == offsets
    assert [after.states[k] for k in sorted(after.states)] == expected
    assert {after.key_partition[k] for k in after.states} == {0, 1}
    assert after.schedule.snapshot() == idle
    assert after.tracker.offsets == offsets, "what a later checkpoint starts from"
    assert after.adopt({0: (-1, 10**6)}) == {}, "read once"


def test_a_store_holding_an_uncommitted_transactions_records_is_removed(tmp_path: Path) -> None:
    changelog = local(tmp_path)
    folded(changelog, commit=False)
    assert changelog.checkpoint() is None
    changelog.states.parts.exit()
    assert not changelog.states.parts.path.exists()
    assert local(tmp_path).adopt({0: (-1, 10**6), 1: (-1, 10**6)}) == {}


def test_a_key_of_no_tracked_partition_or_an_unwritten_state_keeps_nothing(tmp_path: Path) -> None:
    changelog = local(tmp_path)
    folded(changelog)
    changelog.tracker.keep_only({0})  # partition 1 moved away, but its keys are still here
    assert changelog.checkpoint() is None
    changelog = local(tmp_path / "other")
    folded(changelog)
    key = next(iter(changelog.states))
    changelog.states[key] = changelog.states[key]  # set, not yet written
    assert changelog.checkpoint() is None


def test_a_partition_the_changelog_cannot_vouch_for_is_dropped_and_read_whole(tmp_path: Path) -> None:
    before = local(tmp_path)
    folded(before)
    offsets = dict(before.tracker.offsets)
    keys_of_1 = [k for k in before.states if before.owners[k] == 1]
    before.states.parts.exit()

    after = local(tmp_path)
    # partition 0: its first offset moved past the checkpoint (records deleted); 1: assigned elsewhere
    assert after.adopt({0: (offsets[0] + 1, offsets[0] + 5)}) == {}
    assert len(after.states) == 0 and not after.key_partition
    assert all(after.states.parts.get(k) is None for k in keys_of_1)
    assert not any(True for _ in after.states.parts.scan("\x00m\x00")), "no record of a dropped key is left"


def test_a_topic_made_again_fails_the_bound_of_its_last_committed_record(tmp_path: Path) -> None:
    before = local(tmp_path)
    folded(before)
    offsets = dict(before.tracker.offsets)
    before.states.parts.exit()
    after = local(tmp_path)
    assert after.adopt({0: (-1, offsets[0] - 1), 1: (-1, offsets[1])}) == {1: offsets[1]}


def test_stale_stores_go_and_another_changelogs_fresh_store_is_left_to_it(tmp_path: Path) -> None:
    root = state_dir(tmp_path)
    now = int(time.time() * 1000)
    for name, topic, age_s in (("1-stale", TOPIC, state_checkpoint.ADOPT_WITHIN_S + 60),
                               ("2-theirs", "other-app-changelog", 5), ("3-bare", TOPIC, None)):
        (root / name / "db").mkdir(parents=True)
        (root / name / "lock").touch()
        if age_s is not None:
            state_checkpoint.write(root / name, Checkpoint(topic, now - int(age_s * 1000), {}, {}))
    mine = local(tmp_path)
    assert not (root / "1-stale").exists() and not (root / "3-bare").exists()
    assert (root / "2-theirs" / state_checkpoint.FILE).exists()
    assert mine.states.parts.path.name not in ("2-theirs",)
    theirs = open_parts(tmp_path, "other-app-changelog")
    assert theirs.path == root / "2-theirs"
    with open(root / "2-theirs" / "lock", "a") as other:  # held by its adopter
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            raise AssertionError("an adopted store is not locked")
        except BlockingIOError:
            pass


def test_the_tracker_counts_a_transaction_only_once_it_committed() -> None:
    tracker = CommitTracker()
    tracker.recovered(0, 40)
    tracker.sent("tid-0", 0, 45)
    tracker.sent("tid-1", 1, 7)
    assert tracker.consistent() is None
    tracker.committed("tid-0")
    assert tracker.consistent() is None and tracker.offsets == {0: 45}
    tracker.committed("tid-1")
    assert tracker.consistent() == {0: 45, 1: 7}
    tracker.sent("tid-1", 1, 9)
    tracker.keep_only({0})  # 1 moved away with its pending records
    assert tracker.consistent() == {0: 45}
    tracker.recovered(0, 30)
    assert tracker.offsets == {0: 45}, "an offset never goes back"
    tracker.writing({0})  # a batch cut short between its writes and their confirmation
    assert tracker.consistent() is None
    tracker.sent("tid-0", 0, 50)
    tracker.confirmed({0})
    assert tracker.consistent() is None, "sent, not committed"
    tracker.committed("tid-0")
    assert tracker.consistent() == {0: 50}


def test_a_checkpoint_reads_back_equal_and_a_damaged_one_is_none(tmp_path: Path) -> None:
    checkpoint = Checkpoint(TOPIC, 123, {0: 5, 3: 9}, {0: ["thread:a"], 3: ["resource:r"]}, {"thread:a": 77}, ["x"])
    state_checkpoint.write(tmp_path, checkpoint)
    assert state_checkpoint.read(tmp_path) == checkpoint
    (tmp_path / state_checkpoint.FILE).write_bytes(b'{"topic": "t"')
    assert state_checkpoint.read(tmp_path) is None


def _snapshot(changelog: LocalChangelog, checkpoint: Checkpoint | None) -> None:
    """What streams/state_snapshots.py does under and after the fence, at once."""
    assert changelog.states.parts.copy()
    changelog.states.parts.publish(checkpoint)


def _die(changelog: LocalChangelog) -> None:
    """What a kill -9 leaves: the store's files as they are, its lock released, no checkpoint."""
    parts = changelog.states.parts
    parts._db.close()  # noqa: SLF001 - the process is gone
    parts._closed = True  # noqa: SLF001
    assert parts._lock is not None  # noqa: SLF001
    parts._lock.close()  # noqa: SLF001


def test_after_a_crash_the_snapshot_is_adopted_and_nothing_written_after_it(tmp_path: Path) -> None:
    before = local(tmp_path)
    expected = folded(before)
    checkpoint = before.checkpoint()
    assert checkpoint is not None
    _snapshot(before, checkpoint)
    victim = sorted(before.states)[0]
    before.states.parts.put(victim, b"an uncommitted transaction's state")
    before.states.parts.put("thread:new", b"another")
    _die(before)

    after = local(tmp_path)
    assert after.states.parts.path == before.states.parts.path
    assert not (after.states.parts.path / "snapshot").exists(), "the snapshot became the store"
    assert after.adopt({p: (-1, o) for p, o in checkpoint.offsets.items()}) == checkpoint.offsets
    assert [after.states[k] for k in sorted(after.states)] == expected
    assert after.states.parts.get("thread:new") is None


def test_a_store_that_died_without_a_snapshot_is_removed_and_a_clean_stop_outranks_its_snapshot(
        tmp_path: Path) -> None:
    died = local(tmp_path)
    folded(died)
    _die(died)
    fresh = local(tmp_path)
    assert fresh.states.parts.path != died.states.parts.path and not died.states.parts.path.exists()
    expected = folded(fresh)
    _snapshot(fresh, fresh.checkpoint())
    fresh.states.parts.exit()  # the clean stop's checkpoint replaces the snapshot
    assert not (fresh.states.parts.path / "snapshot").exists()
    after = local(tmp_path)
    assert after.adopt({0: (-1, 10**6), 1: (-1, 10**6)}) and [after.states[k] for k in sorted(after.states)] == expected


class _App:
    def __init__(self) -> None:
        self.rebalancing, self.rebalancing_count = False, 0


async def test_snapshots_are_taken_when_due_and_prepared_never_in_a_rebalance_and_dropped_across_one(
        tmp_path: Path) -> None:
    from streams.state_snapshots import Snapshots

    now = [0.0]
    app = _App()
    snapshots = Snapshots(60, app, clock=lambda: now[0])
    changelog = local(tmp_path)
    expected = folded(changelog)
    snapshot_dir = changelog.states.parts.path / "snapshot"
    await snapshots.prepare(changelog)
    assert not await snapshots.take(changelog), "not due yet"
    now[0] = 61
    assert not await snapshots.take(changelog), "due, but the memtable was not written out first"
    await snapshots.prepare(changelog)
    app.rebalancing = True
    assert not await snapshots.take(changelog), "never while a rebalance runs"
    app.rebalancing = False
    changelog.tracker.writing({0})
    assert not await snapshots.take(changelog), "never with uncommitted records in the store"
    changelog.tracker.confirmed({0})
    copy = changelog.states.parts.copy

    def rebalanced_meanwhile() -> bool:
        app.rebalancing_count += 1
        return copy()

    changelog.states.parts.copy = rebalanced_meanwhile  # type: ignore[method-assign]
    assert not await snapshots.take(changelog), "dropped: a rebalance began"
    await snapshots.published()
    assert not snapshot_dir.exists() and not (changelog.states.parts.path / "snapshot.new").exists()
    changelog.states.parts.copy = copy  # type: ignore[method-assign]
    assert await snapshots.take(changelog)
    victim = sorted(changelog.states)[0]
    changelog.states.parts.put(victim, b"written after the copy, before it is published")
    await snapshots.published()
    assert (snapshot_dir / state_checkpoint.FILE).exists()
    assert time.time() - metrics.STATE_SNAPSHOT_TIME._value.get() < 60, "operators see when the last one was made"
    assert not await snapshots.take(changelog), "once per interval"
    assert not await Snapshots(0, app, clock=lambda: 10**9).take(changelog), "0: never"
    _die(changelog)
    after = local(tmp_path)
    assert after.adopt({0: (-1, 10**6), 1: (-1, 10**6)}) and [after.states[k] for k in sorted(after.states)] == expected
