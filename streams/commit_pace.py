"""When the worker commits its transactions: at once when the fold has nothing more waiting or a
quiet spell came before, else at most once per commit interval (issue 19 item 2: a read-your-writes
wait costs no more than the commit interval plus one read).

A fixed timer committed every ``commit_interval_ms`` whatever came, so a lone message (an agent's
turn on a quiet thread) waited half an interval on average, and a whole one at worst, before its
status and rows became visible to read_committed consumers (the sink, the SDK's waits). Here:

* Every acknowledgement that needs a commit asks for one (:meth:`CommitPace.ask`: a processor
  batch, an Observer/Reflector result).
* **Drained: commit now.** A processor batch after which no input record waits in the fold's queue
  asks with ``drained``: nothing would join its transaction by waiting, so the committer commits at
  once. A quiet worker, or one that keeps up with a trickle of agent turns, pays one commit per
  batch, and commits that find more asked work behind them follow at once (group commit: the
  records asked for while a commit runs go in the next one).
* **Awaited: commit now.** In the embedded worker the reader knows which lookup keys a caller waits
  on (``context(wait_for_message_id=…)``, streams/reader/fold_watch.py); a batch that folded one of
  them is committed at once even while input waits, so a waiting agent's turn is not held for the
  interval behind other agents' messages. Commits under such load come once per batch, and the
  batches grow by what arrives while one commits (bench 8, 32 agents waiting).
* **Busy: at most once per interval.** While input keeps waiting, asked work is committed once the
  last commit of asked work is an interval old, so a loaded worker's transactions stay large and its
  commits no more frequent than the interval. The committer sleeps until exactly that moment: asked
  work waits at most one interval. Work asked after a quiet interval commits at once too.
* Every ``SWEEP_INTERVALS`` intervals it also commits unasked: an acknowledgement this file does not
  know of is committed late, never left for the stall guard.
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
        self._drained = False  # some asker since the last commit had nothing more waiting
        self._asked = asyncio.Event()

    def ask(self, drained: bool = False, awaited: bool = False) -> None:
        """Acknowledged work waits for a commit; ``drained``: its asker has no input waiting, and
        ``awaited``: a caller waits to read what it folded; either way the commit need not wait for
        the interval."""
        self._pending = True
        self._drained = self._drained or drained or awaited
        self._asked.set()

    def due(self) -> bool:
        """Commit now: asked-for work is waiting and either an asker was drained or the last such
        commit is an interval old; or nothing was committed for ``SWEEP_INTERVALS`` intervals."""
        now = self._clock()
        return ((self._pending and (self._drained or now - self._last >= self.interval_s))
                or now - self._swept >= SWEEP_INTERVALS * self.interval_s)

    def committing(self) -> None:
        """A commit starts now: everything asked for so far is in it."""
        now = self._clock()
        if self._pending:
            self._last, self._pending, self._drained = now, False, False
        self._swept = now

    def wake_in(self) -> float:
        """Seconds until a commit may be due with nothing more asked: asked work's interval end,
        else the next sweep tick (half an interval)."""
        if self._pending:
            return max(0.0, self._last + self.interval_s - self._clock())
        return self.interval_s / 2

    async def asked(self) -> None:
        """Until :meth:`ask` is called or :meth:`wake_in` passes (the committer's tick)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._asked.wait(), self.wake_in())
        self._asked.clear()
