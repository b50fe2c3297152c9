"""streams/recovery.py without a broker: the recovery-end signal is a latch over Faust's clears."""

from __future__ import annotations

import faust

from streams.recovery import PromptRecovery, PromptTableManager


def test_recovery_end_survives_the_changelog_reader_s_clear_until_the_next_recovery_starts() -> None:
    app = faust.App("latch-test", TableManager=PromptTableManager, web_enabled=False)
    recovery = app.tables.recovery
    assert isinstance(recovery, PromptRecovery)
    recovery._set_recovery_started()
    end = recovery.signal_recovery_end
    assert not end.is_set()
    end.set()  # the changelog reader: the event that completes recovery was applied
    end.clear()  # its next iteration, possibly before the recovery task waits
    assert end.is_set(), "a recovery task that starts waiting now must still see the end"
    recovery._set_recovery_started()
    assert not end.is_set(), "the next recovery must wait for its own end"


async def test_a_partition_kept_through_a_rebalance_gets_the_new_highwater_not_the_sum(monkeypatch) -> None:
    from collections import Counter

    from aiokafka import TopicPartition
    from faust.types import TP

    from streams import recovery as module

    async def tail(reader, partitions, deadline_s, uncommitted):
        return {TopicPartition("changelog", 0): 108, TopicPartition("changelog", 1): -1}

    async def readers(self):
        return None, None

    monkeypatch.setattr(module, "last_committed_offsets", tail)
    monkeypatch.setattr(PromptRecovery, "_readers", readers)
    app = faust.App("highwater-test", TableManager=PromptTableManager, web_enabled=False)
    kept, new = TP("changelog", 0), TP("changelog", 1)
    highwaters: Counter = Counter({kept: 105})  # from the previous generation
    await app.tables.recovery._build_highwaters(None, {kept, new}, highwaters, "active")
    assert highwaters == {kept: 108, new: -1}


async def test_a_partition_that_left_and_came_back_is_read_from_the_start_even_after_a_skipped_rebalance() -> None:
    from faust.types import TP

    app = faust.App("return-test", TableManager=PromptTableManager, web_enabled=False)
    recovery = app.tables.recovery
    changelog = TP("return-test-om-state-changelog", 1)
    class Table:  # the memory store: no persisted offsets
        def persisted_offset(self, tp: TP) -> None:
            return None

    table = Table()
    app.tables._changelogs[changelog.topic] = table  # type: ignore[index]
    actives: set = {changelog}
    app.assignor.assigned_actives = lambda: actives  # type: ignore[method-assign]
    app.assignor.assigned_standbys = lambda: set()  # type: ignore[method-assign]
    app.consumer_generation_id = 5
    await recovery.on_rebalance({changelog}, set(), {changelog}, 5)
    recovery.active_offsets[changelog] = 41  # read up to 41 in generation 5
    app.consumer_generation_id = 7  # generation 6 took the partition away, and 7 began before its callback ran:
    actives = set()
    await recovery.on_rebalance(set(), {changelog}, set(), 6)  # Faust returns early, revoking nothing
    assert recovery.active_offsets[changelog] == 41
    actives = {changelog}
    await recovery.on_rebalance({changelog}, set(), {changelog}, 7)  # back: its states were dropped meanwhile
    assert recovery.active_offsets[changelog] is None, "read from the start, not from 41"


async def test_faust_s_aborted_transaction_guess_never_marks_an_exact_highwater_applied_early(monkeypatch) -> None:
    from aiokafka import TopicPartition
    from faust.types import TP

    from streams import recovery as module

    async def tail(reader, partitions, deadline_s, uncommitted):
        return {TopicPartition("changelog", 1): 0}  # the partition's only record is its highwater

    async def readers(self):
        return None, None

    monkeypatch.setattr(module, "last_committed_offsets", tail)
    monkeypatch.setattr(PromptRecovery, "_readers", readers)
    app = faust.App("guess-test", TableManager=PromptTableManager, web_enabled=False)
    recovery = app.tables.recovery
    changelog, other = TP("changelog", 1), TP("om.messages.v1", 1)

    async def fetched(tp):  # the consumer has seeked to 0: the next offset to fetch is the highwater
        return 0

    app.consumer.position = fetched
    await recovery._build_highwaters(None, {changelog}, recovery.active_highwaters, "active")
    recovery.active_offsets[changelog] = -1  # nothing applied yet
    highwater, applied = recovery.active_highwaters[changelog], recovery.active_offsets[changelog]
    # Faust's guess (Recovery._slurp_changelogs.detect_aborted_tx): applied < highwater and position >= highwater
    assert applied < highwater and not await app.consumer.position(changelog) >= highwater
    assert await app.consumer.position(other) == 0, "any other partition: the consumer's own position"
    recovery._exact = False  # Faust's fallback highwaters: the guess is theirs again
    assert await app.consumer.position(changelog) == 0


def test_every_state_table_is_asked_to_adopt_its_kept_store_even_with_no_partition_of_it() -> None:
    """A worker whose first assignment holds none of a kept store's partitions must still drop it
    (streams/state_checkpoint.py): left undropped, its records would lie under keys recovered later."""
    from types import SimpleNamespace

    from faust.types import TP

    asked: list[dict] = []

    class Table:  # hashable, as Faust's tables are
        def __init__(self, raw: bool, answer: dict) -> None:
            self.local = SimpleNamespace(adopt=lambda bounds: asked.append(dict(bounds)) or answer)
            if raw:
                self.recover_raw = lambda *a: None

    adopting, other = Table(True, {1: 40}), Table(False, {})
    recovery = SimpleNamespace(tables=SimpleNamespace(_changelogs={"state": adopting, "plain": other}),
                               tp_to_table={TP("state", 1): adopting}, active_highwaters={TP("state", 1): 90})
    PromptRecovery._adopt_kept_stores(recovery, [], {})  # type: ignore[arg-type]
    assert asked == [{}], "asked with no partition; a table without raw recovery is not asked"
    destination = {TP("state", 1): -1}
    PromptRecovery._adopt_kept_stores(recovery, [TP("state", 1)], destination)  # type: ignore[arg-type]
    assert asked[-1] == {1: (-1, 90)} and destination == {TP("state", 1): 40}, "reads after the checkpoint"
