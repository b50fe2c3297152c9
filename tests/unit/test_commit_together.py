"""streams/commit_together.py: a worker's partitions' transactions are committed at once, each as Faust
commits it (under its lock, offsets, commit, a new transaction), and a failure still reaches the caller."""

from __future__ import annotations

import asyncio

import pytest

from streams.commit_together import ProducerCommittingTogether


class FakeTransaction:
    """A transactional producer whose steps are logged; ``gate`` holds every offsets send until set."""

    def __init__(self, tid: str, log: list[tuple[str, str]], gate: asyncio.Event, fail: bool = False) -> None:
        self.tid, self.log, self.gate, self.fail = tid, log, gate, fail

    async def send_offsets_to_transaction(self, offsets: dict, group_id: str) -> None:
        self.log.append((self.tid, f"offsets {sorted(offsets.items())} {group_id}"))
        await self.gate.wait()

    async def commit_transaction(self) -> None:
        if self.fail:
            self.log.append((self.tid, "commit failed"))
            raise RuntimeError(f"{self.tid}: EndTxn refused")
        self.log.append((self.tid, "commit"))

    async def begin_transaction(self) -> None:
        self.log.append((self.tid, "begin"))


def _producer(tids: list[str], log: list, gate: asyncio.Event, failing: str = "") -> ProducerCommittingTogether:
    producer = object.__new__(ProducerCommittingTogether)  # only the two maps Faust keeps per transactional id
    producer._transaction_producers = {t: FakeTransaction(t, log, gate, fail=t == failing) for t in tids}
    producer._trn_locks = {t: asyncio.Lock() for t in tids}
    return producer


async def _gate_opened_when_all_waiting(log: list, gate: asyncio.Event, expected: int) -> None:
    async def wait() -> None:
        while sum(step.startswith("offsets") for _, step in log) < expected:
            await asyncio.sleep(0)
        gate.set()

    await asyncio.wait_for(wait(), timeout=5)


async def test_partitions_commit_at_once_each_in_faust_order() -> None:
    log: list[tuple[str, str]] = []
    gate = asyncio.Event()
    producer = _producer(["app-g-0", "app-g-1"], log, gate)
    commit = asyncio.ensure_future(producer.commit_transactions(
        {"app-g-0": {"tp0": 10}, "app-g-1": {"tp1": 20}}, "app"))
    # both offsets sends are in flight before either may go on: in series the second would never start
    await _gate_opened_when_all_waiting(log, gate, expected=2)
    await asyncio.wait_for(commit, timeout=5)
    for tid, offsets in (("app-g-0", "[('tp0', 10)] app"), ("app-g-1", "[('tp1', 20)] app")):
        assert [step for t, step in log if t == tid] == [f"offsets {offsets}", "commit", "begin"]


async def test_no_new_transaction_when_not_asked() -> None:
    log: list[tuple[str, str]] = []
    gate = asyncio.Event()
    gate.set()
    producer = _producer(["a", "b"], log, gate)
    await producer.commit_transactions({"a": {"x": 1}, "b": {"y": 2}}, "g", start_new_transaction=False)
    assert sorted(step for _, step in log if not step.startswith("offsets")) == ["commit", "commit"]


async def test_a_failed_commit_is_raised_after_the_others_ended() -> None:
    log: list[tuple[str, str]] = []
    gate = asyncio.Event()
    gate.set()
    producer = _producer(["a", "b", "c"], log, gate, failing="b")
    with pytest.raises(RuntimeError, match="b: EndTxn refused"):
        await producer.commit_transactions({"a": {"x": 1}, "b": {"y": 2}, "c": {"z": 3}}, "g")
    assert [step for t, step in log if t == "a"][1:] == ["commit", "begin"]
    assert [step for t, step in log if t == "c"][1:] == ["commit", "begin"]
    assert [step for t, step in log if t == "b"][1:] == ["commit failed"]


async def test_a_commit_waits_for_its_transactions_lock() -> None:
    """The Outbox holds a transaction's lock while it queues records into it (streams/transactions.py)."""
    log: list[tuple[str, str]] = []
    gate = asyncio.Event()
    gate.set()
    producer = _producer(["a", "b"], log, gate)
    await producer._trn_locks["a"].acquire()
    commit = asyncio.ensure_future(producer.commit_transactions({"a": {"x": 1}, "b": {"y": 2}}, "g"))

    async def b_committed() -> None:
        while (("b", "begin")) not in log:
            await asyncio.sleep(0)

    await asyncio.wait_for(b_committed(), timeout=5)
    assert not [step for t, step in log if t == "a"]  # held back by its lock, while b went on
    producer._trn_locks["a"].release()
    await asyncio.wait_for(commit, timeout=5)
    assert [step for t, step in log if t == "a"][1:] == ["commit", "begin"]


async def test_an_unknown_transaction_is_skipped() -> None:
    log: list[tuple[str, str]] = []
    gate = asyncio.Event()
    gate.set()
    producer = _producer(["a"], log, gate)
    producer._trn_locks["gone"] = asyncio.Lock()
    await producer.commit_transactions({"a": {"x": 1}, "gone": {"y": 2}}, "g")
    assert [t for t, _ in log] == ["a", "a", "a"]
