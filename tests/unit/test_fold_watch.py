"""Issue 19 item 2: read-your-writes waits are woken by the embedded sink, never lose a wake-up, and
learn that their own message was folded only from a status event naming it."""

from __future__ import annotations

import asyncio
import threading
import time

from streams.reader.fold_watch import FoldWatch
from streams.reader.queries import AwaitedMessage
from streams.sink.rows import EVENT_COLUMNS

MINE = AwaitedMessage("r", "t", "thread:t", "m1")


def event(key: str = "thread:t", resource: str = "r", applied: str = "m1", type_: str = "status") -> list:
    values = {"resource_id": resource, "lookup_key": key, "thread_id": "t", "type": type_, "cycle_id": "", "at": 1,
              "event_id": 1, "applied_message_id": applied, "payload": "{}", "offset": 0}
    return [values[column] for column in EVENT_COLUMNS]


def from_sink_thread(watch: FoldWatch, rows: list[list]) -> None:
    """As the sink calls it: from its writer thread."""
    thread = threading.Thread(target=watch.stored, args=(rows,))
    thread.start()
    thread.join()


async def test_the_sinks_event_of_the_key_wakes_the_wait_well_before_its_deadline() -> None:
    watch = FoldWatch(asyncio.get_running_loop())
    with watch.watching(MINE) as wait:
        waiting = asyncio.create_task(wait.next(30))
        await asyncio.sleep(0)  # the wait is parked
        start = time.monotonic()
        from_sink_thread(watch, [event()])
        await asyncio.wait_for(waiting, 5)
        assert time.monotonic() - start < 5 and wait.folded


async def test_a_fold_stored_between_two_looks_is_not_lost() -> None:
    watch = FoldWatch(asyncio.get_running_loop())
    with watch.watching(MINE) as wait:
        from_sink_thread(watch, [event()])  # stored while the waiter was looking, not yet waiting
        await asyncio.sleep(0)  # the loop runs the hand-over
        await asyncio.wait_for(wait.next(30), 5)
        assert wait.folded


async def test_only_a_status_naming_the_message_under_its_resource_counts_as_its_fold() -> None:
    watch = FoldWatch(asyncio.get_running_loop())
    with watch.watching(MINE) as wait:
        from_sink_thread(watch, [event(applied="m0"), event(resource="r-other"), event(applied="", type_="observation-end")])
        await asyncio.wait_for(wait.next(30), 5)  # the key changed: a look is due
        assert not wait.folded


async def test_a_context_row_of_the_key_wakes_the_wait_without_a_fold() -> None:
    """The fold may be stored before the message: then only the message's row, with no event, covers it."""
    watch = FoldWatch(asyncio.get_running_loop())
    with watch.watching(MINE) as wait:
        row = ["thread:t", "r", None, None, None, 0, 0, "{}", ["t"], ["t"], 7]  # an om_contexts row
        thread = threading.Thread(target=watch.rows_written, args=([row],))
        thread.start()
        thread.join()
        await asyncio.wait_for(wait.next(30), 5)
        assert not wait.folded


async def test_another_keys_events_do_not_wake_the_wait() -> None:
    watch = FoldWatch(asyncio.get_running_loop())
    with watch.watching(MINE) as wait:
        from_sink_thread(watch, [event(key="thread:u")])
        await asyncio.sleep(0)
        start = time.monotonic()
        await wait.next(0.05)  # times out: nothing of its key was stored
        assert time.monotonic() - start >= 0.04 and not wait.folded


async def test_a_finished_wait_leaves_nothing_behind() -> None:
    watch = FoldWatch(asyncio.get_running_loop())
    with watch.watching(MINE):
        pass
    watch.stored([event()])  # no waiter: nothing handed to the loop
    assert not watch._waits


async def test_the_processor_learns_which_keys_a_caller_waits_on() -> None:
    watch = FoldWatch(asyncio.get_running_loop())
    assert not watch.awaits_any(["thread:t"])
    with watch.watching(MINE):
        assert watch.awaits_any(["thread:other", "thread:t"])
        assert not watch.awaits_any(["thread:other"]) and not watch.awaits_any([])
    assert not watch.awaits_any(["thread:t"]), "a wait that ended is forgotten"
