"""streams/fetch_positions.py without a broker: the fetch never widens to every partition, and a
seek back to committed reaches partitions committed at 0 or never."""

from __future__ import annotations

import asyncio
from typing import Any

from faust.types import TP

from streams.fetch_positions import SLICE_S, FetchPositions

IN0, IN1, IN2, IN3 = (TP("om.jobs.v1", p) for p in range(4))
CHANGELOG = TP("om-worker-om-state-changelog", 0)


class _Faust:
    """What the mixin finds below it in Faust's consumer thread."""

    def __init__(self, consumer: Any) -> None:
        self.consumer = consumer
        self.fetched_for: list[set[TP] | None] = []
        self.app = type("App", (), {"tables": type("Tables", (), {"changelog_topics": {CHANGELOG.topic}})()})()

    async def _fetch_records(self, consumer: Any, active_partitions: set[TP] | None, timeout: float | None = None,
                             max_records: int | None = None) -> dict:
        self.fetched_for.append(active_partitions)
        return {tp: ["record"] for tp in active_partitions or ()}

    def _ensure_consumer(self) -> Any:
        return self.consumer

    async def call_thread(self, fun: Any, *args: Any, **kwargs: Any) -> Any:
        return await fun(*args, **kwargs)


class _Thread(FetchPositions, _Faust):
    pass


class _AIOKafka:
    def __init__(self, committed: dict[TP, int | None], firsts: dict[TP, int]) -> None:
        self.committed, self.firsts, self.seeks = committed, firsts, {}

    async def seek_to_committed(self) -> dict[TP, int | None]:
        for tp, offset in self.committed.items():
            if offset and offset > 0:  # aiokafka's own rule
                self.seeks[tp] = offset
        return dict(self.committed)

    async def seek_to_beginning(self, *partitions: TP) -> None:
        for tp in partitions:
            self.seeks[tp] = self.firsts.get(tp, 0)


async def test_a_set_emptied_before_the_fetch_fetches_nothing_instead_of_everything() -> None:
    thread = _Thread(None)
    assert await thread._fetch_records(None, set()) == {}
    assert thread.fetched_for == []


async def test_the_fetch_asks_for_a_snapshot_that_later_pauses_do_not_change() -> None:
    thread, live = _Thread(None), {IN0, IN1}
    await thread._fetch_records(None, live)
    live.clear()  # the event loop's thread pauses everything after the call began
    assert thread.fetched_for == [{IN0, IN1}]
    assert thread.fetched_for[0] is not live


async def test_partitions_committed_at_zero_or_never_are_seeked_back_too() -> None:
    consumer = _AIOKafka({IN0: 12, IN1: 0, IN2: None, IN3: None, CHANGELOG: None}, firsts={IN2: 0, IN3: 40})
    committed = await _Thread(consumer).seek_to_committed()
    assert committed == consumer.committed
    assert consumer.seeks == {IN0: 12, IN1: 0, IN2: 0, IN3: 40}, "the changelog is left to table recovery"


async def test_a_client_only_app_still_fetches_every_partition() -> None:
    thread = _Thread(None)
    await thread._fetch_records(None, None)
    assert thread.fetched_for == [None]


class _WaitingFaust(_Faust):
    """aiokafka's fetch for partitions with nothing buffered waits out its timeout. Here records
    exist only for ``IN1``, and the event loop resumes ``IN1`` while the first fetch waits."""

    def __init__(self, live: set[TP]) -> None:
        super().__init__(None)
        self.live, self.timeouts = live, []

    async def _fetch_records(self, consumer: Any, active_partitions: set[TP] | None, timeout: float | None = None,
                             max_records: int | None = None) -> dict:
        self.fetched_for.append(set(active_partitions or ()))
        self.timeouts.append(timeout)
        self.live.add(IN1)  # recovery resumes the inputs meanwhile
        return {IN1: ["record"]} if active_partitions and IN1 in active_partitions else {}


class _Waiting(FetchPositions, _WaitingFaust):
    pass


async def test_a_partition_resumed_while_a_fetch_waits_is_read_in_its_next_slice_not_after_the_timeout() -> None:
    live = {CHANGELOG}  # recovery has paused the inputs
    thread = _Waiting(live)
    assert await thread._fetch_records(None, live, timeout=1.0) == {IN1: ["record"]}
    assert thread.fetched_for == [{CHANGELOG}, {CHANGELOG, IN1}]
    assert all(t is not None and t <= SLICE_S for t in thread.timeouts), "a slice waited longer than SLICE_S"


class _EmptyFaust(_Faust):
    async def _fetch_records(self, consumer: Any, active_partitions: set[TP] | None, timeout: float | None = None,
                             max_records: int | None = None) -> dict:
        self.fetched_for.append(set(active_partitions or ()))
        await asyncio.sleep(timeout or 0)
        return {}


class _Empty(FetchPositions, _EmptyFaust):
    pass


async def test_a_fetch_with_nothing_to_read_returns_empty_once_its_timeout_has_passed() -> None:
    thread = _Empty(None)
    assert await thread._fetch_records(None, {IN0}, timeout=3 * SLICE_S) == {}
    assert len(thread.fetched_for) >= 2, "the wait was not sliced"
