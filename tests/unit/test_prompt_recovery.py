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
