"""Read-your-writes waits woken by the sink, not by polling (issue 19 item 2, the wait path).

A caller of ``context(..., wait_for_message_id=…)`` waits until the processor's fold of its message
is stored. With a ClickHouse server (other processes sink) the reader can only ask again and again;
in the embedded worker its own sink is the one writer, so the sink tells it instead: it hands
:meth:`FoldWatch.rows_written` the context rows it inserted and :meth:`FoldWatch.stored` the events
those rows show (just before it inserts them), and every wait on one of their lookup keys wakes. Both matter: the fold may be stored before the
message itself (they travel on different topics), and then only the message's context row, with no
event of its own, makes the context cover it. Rules this file keeps:

* **A wake is a hint, the rows decide.** A woken wait looks again (the context row, and one
  query when the row alone cannot show the message); a fold it learns from an event row it saw
  stored spares it that query only when the row lists the message. So a spurious wake costs time,
  never a wrong answer. The row a wait looks at is the newest of the table's (or the reader's
  cache) and the one the sink handed it for its own resource: the sink hands its shortcuts' rows
  over before it inserts them (:mod:`streams.sink.writer`), and withdraws them from the cache if
  that insert fails.
* **A first look asks no query once the key is remembered**: the folds the sink stored, by key
  (streams/reader/fold_memory.py), loaded once, then kept by what the sink tells.
* **The sink tells every fold.** Every event row the sink stores is handed over once it is in the
  table (some also before, with the rows that show them: streams/sink/writer.py). So once a wait's
  first look (after it was registered) found no fold in the tables, a later look that was told of
  none needs no query to know it is still not there (``Wait.told_every_fold``): only the first look,
  and a look that needs the observation versions, ask. Without this a wait woken by its message's
  own row, or by an Observer result of the key, asked the tables each time (~2.5 chDB queries a
  wait).
* **No lost wake-ups.** A wait is registered before its first look, and its flag stays set until
  it looks again, so a batch stored between the look and the wait still wakes it.
* **Thread-safe at the edge.** The sink calls from its writer thread: it reads the registry under a
  lock and hands the matches to the event loop (``call_soon_threadsafe``); everything else runs on
  the loop. A batch with no waiter on its keys costs a dictionary lookup per row.
* :class:`Polling` is the same interface without a sink to listen to (server mode): it sleeps the
  poll interval or the rest of the deadline, whichever is shorter.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from streams.reader.fold_memory import FoldMemory, Load
from streams.reader.queries import AwaitedMessage
from streams.sink.rows import EVENT_COLUMNS

_RESOURCE, _KEY, _APPLIED = (EVENT_COLUMNS.index(c) for c in ("resource_id", "lookup_key", "applied_message_id"))


class Wait:
    """One caller's wait for one message; ``folded`` once a stored status event names it, ``row``
    the newest context row of its key and resource the sink handed over (undecoded)."""

    told_every_fold = True  # the sink hands over every event it stores, once it is in the table

    def __init__(self, awaited: AwaitedMessage) -> None:
        self.awaited = awaited
        self.folded = False
        self.looked = False  # a look asked the tables (after the wait was registered)
        self.row: Sequence[Any] | None = None
        self._changed = asyncio.Event()

    def saw(self, resource_id: str, applied_message_id: str, row: Sequence[Any] | None = None) -> None:
        """An event (``applied_message_id`` if a status) or a context row of the key was stored."""
        if resource_id == self.awaited.resource_id:
            if applied_message_id == self.awaited.message_id:
                self.folded = True
            if row is not None and (self.row is None or row[-1] > self.row[-1]):
                self.row = row
        self._changed.set()

    async def next(self, timeout: float) -> None:
        """Until the sink stored another event of the key, or ``timeout`` s passed."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)
        self._changed.clear()


class FoldWatch:
    """The embedded worker's registry of waits, fed by its sink."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._waits: dict[str, set[Wait]] = {}
        self.memory = FoldMemory()  # every fold the sink stored, by key (streams/reader/fold_memory.py)

    async def folded(self, awaited: AwaitedMessage, load: Load) -> bool | None:
        """Whether the fold of ``awaited`` is stored, without a query once its key is remembered."""
        return await self.memory.folded((awaited.resource_id, awaited.key), awaited.message_id, load)

    @contextlib.contextmanager
    def watching(self, awaited: AwaitedMessage) -> Iterator[Wait]:
        wait = Wait(awaited)
        with self._lock:
            self._waits.setdefault(awaited.key, set()).add(wait)
        try:
            yield wait
        finally:
            with self._lock:
                waits = self._waits[awaited.key]
                waits.discard(wait)
                if not waits:
                    del self._waits[awaited.key]

    def awaits_any(self, keys: Iterable[str]) -> bool:
        """Whether a caller waits on one of these lookup keys (asked by the processor after a batch,
        from the worker's loop: a batch someone waits on is committed at once, streams/commit_pace.py)."""
        if not self._waits:  # a glance without the lock: a wait registered just after it waits as before,
            return False     # at most the commit interval
        with self._lock:
            return any(key in self._waits for key in keys)

    def stored(self, events: Sequence[Sequence[Any]]) -> None:
        """The sink wrote the context rows that show these ``om_events`` rows, and inserts them next
        (called from its writer thread)."""
        self.memory.told((row[_RESOURCE], row[_KEY], row[_APPLIED]) for row in events if row[_APPLIED])
        self._hand_over([(row[_KEY], row[_RESOURCE], row[_APPLIED], None) for row in events])

    def rows_written(self, rows: Sequence[Sequence[Any]]) -> None:
        """The sink inserts these ``om_contexts`` rows (called from its writer thread): a wait on one
        is handed its own resource's row, which may not be in the table yet."""
        self._hand_over([(row[0], row[1], "", row) for row in rows])

    def _hand_over(self, changes: list[tuple[str, str, str, Sequence[Any] | None]]) -> None:
        with self._lock:
            hits = [change for change in changes if change[0] in self._waits]
        if hits:
            self._loop.call_soon_threadsafe(self._wake, hits)

    def _wake(self, hits: list[tuple[str, str, str, Sequence[Any] | None]]) -> None:
        with self._lock:
            matched = [(wait, resource, applied, row) for key, resource, applied, row in hits
                       for wait in self._waits.get(key, ())]
        for wait, resource, applied, row in matched:
            wait.saw(resource, applied, row)


class Polling:
    """Waits without a sink to listen to: every ``interval_s``."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s

    @contextlib.contextmanager
    def watching(self, awaited: AwaitedMessage) -> Iterator[_PollingWait]:
        yield _PollingWait(self.interval_s)

    async def folded(self, awaited: AwaitedMessage, load: Load) -> bool | None:
        """Not known without a query: no sink tells this reader its folds."""
        return None


class _PollingWait:
    folded = False
    row = None  # no sink hands rows over
    told_every_fold = False  # only the tables tell
    looked = False

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s

    async def next(self, timeout: float) -> None:
        await asyncio.sleep(min(self.interval_s, max(timeout, 0.0)))
