"""The embedded reader's selector: a zero-timeout poll that soon follows another is skipped (issue 19:
a read waits for the interpreter lock at every hand-over).

asyncio polls its selector once per loop iteration, with a zero timeout while callbacks are ready.
A poll is a system call, and the thread gives the interpreter lock up for it; in the worker the
reader's thread then waits for the fold, the sink or Faust to hand the lock back (up to the switch
interval, 1 ms, each time). Traced at one agent (``strace -c`` of the reader's thread over 10 s,
656 reads): 3.9 ``epoll_wait`` calls a read beside its one ``recvfrom`` and one ``sendto``, and 20
``futex`` calls, the lock's hand-overs. Rules this file keeps:

* **Only a zero timeout is skipped**, and only within ``min_gap_s`` of the last poll made: the
  loop has callbacks ready, so it runs them first; readiness that arrived meanwhile is seen at
  most ``min_gap_s`` later, or as soon as nothing is ready (a positive or no timeout always polls).
  A loop that keeps callbacks ready for ever still polls every ``min_gap_s``: no socket starves.
* Nothing else changes: registration, the events reported, their order (the base selector's).
"""

from __future__ import annotations

import selectors
import time
from collections.abc import Callable
from typing import Any


class LazyPollSelector(selectors.DefaultSelector):
    def __init__(self, min_gap_s: float = 0.001, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.min_gap_s, self._clock = min_gap_s, clock
        self._polled = float("-inf")
        self.skipped = 0  # zero-timeout polls not made, for tests and probes

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, Any]]:
        if timeout is not None and timeout <= 0 and self._clock() - self._polled < self.min_gap_s:
            self.skipped += 1
            return []
        events = super().select(timeout)
        self._polled = self._clock()
        return events
