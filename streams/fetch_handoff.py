"""The consumer hands a fetched record to the streams without a task per record, unless it must wait.

Faust (faust-streaming 0.15.3, ``Consumer._drain_messages``) delivers every fetched record as
``wait_first(on_message(record), suspend_flow.wait())``: mode's ``Service.wait_first`` makes a task
of each, two more for the consumer's stop and crash events, waits for the first to finish and
cancels the rest — ~30 µs per record, 4–5 % of the processor's CPU in bench 1b (issue 20 item 1),
though ``on_message`` (decode the record, put the event in its streams' queues) almost never waits.

Rules this module keeps:

* ``on_message``'s first step runs at once, in the caller's task. If it finishes there, nothing
  else ran meanwhile (the loop was never given a turn), so the flow cannot have been suspended
  under it, nor the consumer stopped: it is the winner, as it would be in mode's race, and the
  other waits are closed unstarted. An error in that step is raised, as mode raises a winner's.
* If it has to wait (flow control holding it during a rebalance, a stream's queue full, a lock),
  the rest of it races the other waits through mode's ``wait_first`` exactly as before: the flow's
  suspension, a stop or a crash still win over it, and cancel it.
* A consumer already stopped or crashed, or a wait that is not a coroutine, goes to mode's
  ``wait_first`` unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

from mode.services import WaitResults


class EagerHandoff:
    """Mixed into Faust's consumer (streams/fetch_wait.py builds the class)."""

    _stopped: Any  # mode's Service events, as are ``_crashed`` and ``wait_first`` itself
    _crashed: Any

    async def wait_first(self, *coros: Any, timeout: Any = None) -> WaitResults:
        first, others = (coros[0], coros[1:]) if coros else (None, ())
        if not inspect.iscoroutine(first) or self._stopped.is_set() or self._crashed.is_set():
            return await super().wait_first(*coros, timeout=timeout)  # type: ignore[misc]
        try:
            waiting_on = first.send(None)
        except StopIteration as finished:
            _close(others)
            return WaitResults([first], [finished.value], False)
        except BaseException:
            _close(others)
            raise
        return await super().wait_first(_Started(first, waiting_on), *others, timeout=timeout)  # type: ignore[misc]


class _Started:
    """A coroutine whose first step has run and yielded ``waiting_on``: awaiting this runs the rest."""

    def __init__(self, coro: Any, waiting_on: Any) -> None:
        self._coro, self._waiting_on = coro, waiting_on

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, waiting_on = self._coro, self._waiting_on
        while True:
            try:
                sent = yield waiting_on
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as error:  # a cancellation, passed on to the coroutine
                try:
                    waiting_on = coro.throw(error)
                except StopIteration as finished:
                    return finished.value
            else:
                try:
                    waiting_on = coro.send(sent)
                except StopIteration as finished:
                    return finished.value


def _close(waits: tuple[Any, ...]) -> None:
    for wait in waits:
        if inspect.iscoroutine(wait):
            wait.close()
