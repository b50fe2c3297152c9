"""When everything the sink has collected so far is in the tables (:meth:`Landings.landed`).

The embedded sink hands a batch's context rows and events to the reader before it inserts them, and
with ``gather_ms`` it inserts up to that long later (``OM_SINK_GATHER_MS``, streams/sink/service.py).
A read-your-writes wait can therefore return before the tables have the messages it covers, and a
read that goes to the tables (the recall tool's messages, threads and search) right after it would
not see them. Such reads wait here first. Rules this file keeps:

* **Counted from collection.** A batch counts from the moment it is collected, before its start
  announces anything: a reader that was handed its rows finds it counted.
* **Written in order.** The sink writes its queue in collection order, so "N batches written"
  means the first N collected are in the tables.
* **A wait ends the gather.** Writes gather only where nobody waits for them: a wait that has to
  wait calls ``hurry`` (the sink's writer looks at its queue again) and, while any is waiting,
  :attr:`Landings.awaited` tells the writer to write what it has now instead of gathering on.
* **Bounded.** A wait gives up after ``timeout_s`` (a ClickHouse outage holds the writes; the read
  then sees what the tables have, as it would without this), and a stopping sink releases every
  wait.
* Only the sink's loop touches it; readers on other loops reach it through that loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable


class Landings:
    def __init__(self, hurry: Callable[[], None] = lambda: None) -> None:
        self._hurry = hurry
        self._collected = 0
        self._written = 0
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []

    @property
    def awaited(self) -> bool:
        """Whether a read waits for batches not written yet (the writer should not gather)."""
        return bool(self._waiting)

    def collected(self) -> None:
        """A batch was collected; it will be written after the ones before it."""
        self._collected += 1

    def written(self, batches: int) -> None:
        """The next ``batches`` collected are in the tables."""
        self._written += batches
        still = []
        for target, future in self._waiting:
            if target <= self._written:
                if not future.done():
                    future.set_result(None)
            else:
                still.append((target, future))
        self._waiting = still

    def release(self) -> None:
        """The sink stops: nobody waits for writes that will not come."""
        for _, future in self._waiting:
            if not future.done():
                future.set_result(None)
        self._waiting = []

    async def landed(self, timeout_s: float = 5.0) -> None:
        """Until every batch collected before this call is in the tables (or ``timeout_s`` passed)."""
        if self._written >= self._collected:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((self._collected, future))
        self._hurry()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
