"""SIGTERM with model calls in flight: the worker stops within seconds and leaves those jobs to its
restart (issue 24).

Faust's graceful stop waits until every event an agent took is acked, and an Observer call may run
for minutes, so a plain stop hangs while one is in flight. On the stop signal, when calls are in
flight:

* commits stop for good, first: nothing more of this process's work is committed, which is exactly
  the state a kill -9 leaves — the fault tests show the pipeline recovers from it (the open
  transactions are aborted, the restarted worker re-reads from the last commit);
* the calls are cancelled and their jobs acked in this process only, so Faust's wait ends and the
  worker leaves its consumer group cleanly; a job taken after that is not started;
* the restarted worker (or the partition's new owner) runs each of those jobs again, once, and the
  processor applies each result once (the cycle-id compare-and-set).

With no call in flight the stop is Faust's usual graceful one, commits included.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class CallShutdown:
    def __init__(self) -> None:
        self._calls: set[asyncio.Task] = set()
        self.abandoned = False

    @property
    def commits_allowed(self) -> bool:
        return not self.abandoned

    async def run(self, call: Awaitable[T]) -> T | None:
        """The call's result, or None when the stop signal abandoned it (the job must not be answered)."""
        if self.abandoned:
            _close(call)
            return None
        task = asyncio.ensure_future(call)
        self._calls.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.abandoned and task.cancelled() and not (current and current.cancelling()):
                return None
            raise
        finally:
            self._calls.discard(task)

    def begin(self) -> None:
        """Called on SIGTERM/SIGINT, before Faust starts its stop."""
        if self.abandoned or not self._calls:
            return
        self.abandoned = True
        log.warning("om.llm.shutdown.abandon", extra={
            "calls": len(self._calls), "action": "commits stopped; the restarted worker re-runs these jobs"})
        for task in self._calls:
            task.cancel()


def _close(call: Awaitable[object]) -> None:
    close = getattr(call, "close", None)  # a coroutine never awaited would warn
    if callable(close):
        close()
