"""When the worker commits its transactions: at once when acknowledged work follows a quiet spell,
else at most once per commit interval (issue 19 item 2: a read-your-writes wait costs no more than
the commit interval plus one read).

A fixed timer committed every ``commit_interval_ms`` whatever came, so a lone message (an agent's
turn on a quiet thread) waited half an interval on average, and a whole one at worst, before its
status and rows became visible to read_committed consumers (the sink, the SDK's waits). Here:

* Every acknowledgement that needs a commit asks for one (:meth:`CommitPace.ask`: a processor
  batch, an Observer/Reflector result). When the last commit of asked-for work is at least an
  interval old, the committer commits at once: a quiet worker pays one commit per batch, which it
  has time for.
* Under load, batches follow each other and the last commit is always recent: they wait until an
  interval has passed since it, so a busy worker commits no more often than before and its
  transactions stay as large.
* The committer wakes when asked, else every half interval, so asked-for work waits at most an
  interval and a half. Every ``SWEEP_INTERVALS`` intervals it also commits unasked: an
  acknowledgement this file does not know of is committed late, never left for the stall guard.
* A commit that fails is asked for again (the committer lives on; one that never succeeds is the
  stall guard's: streams/stall_guard.py).
* The commit runs in the committer's own task, never in an agent: Faust's commit waits for the
  agents' streams, so an agent committing would wait for itself. Commits still run under the fence
  (streams/app.py): a batch's effects, state and offsets go together.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

SWEEP_INTERVALS = 10


class CommitPace:
    """Whether a commit is due (``clock``: seconds, monotonic), and the committer's wake-up."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._last = self._swept = float("-inf")  # the last commit of asked-for work; the last of any
        self._pending = False
        self._asked = asyncio.Event()

    def ask(self) -> None:
        """Acknowledged work waits for a commit: the committer looks now rather than at its tick."""
        self._pending = True
        self._asked.set()

    def due(self) -> bool:
        """Commit now: asked-for work is waiting and the last such commit is an interval old, or
        nothing was committed for ``SWEEP_INTERVALS`` intervals."""
        now = self._clock()
        return ((self._pending and now - self._last >= self.interval_s)
                or now - self._swept >= SWEEP_INTERVALS * self.interval_s)

    def committing(self) -> None:
        """A commit starts now: everything asked for so far is in it."""
        now = self._clock()
        if self._pending:
            self._last, self._pending = now, False
        self._swept = now

    async def asked(self) -> None:
        """Until :meth:`ask` is called or half an interval passes (the committer's tick)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._asked.wait(), self.interval_s / 2)
        self._asked.clear()
