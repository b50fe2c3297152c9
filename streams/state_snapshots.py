"""When the worker copies its local store for a start after a crash (issue 20 items 4 and 5).

A store kept at a clean stop is adopted by the next start (streams/state_checkpoint.py); a store
whose process died holds what uncommitted transactions wrote, so it is not. Its snapshot is: a copy
made when the store held committed records only, with the checkpoint of what it holds
(streams/state_store.py ``PartStore.snapshot``). A start after a kill -9 or a restart in place then
reads only the changelog after the snapshot, not all of it.

Rules this module keeps:

* **Only at a commit's boundary, under the fence.** The caller holds the processor's fence (no batch
  writes the store meanwhile) and the tracker must say that nothing uncommitted is in the store:
  right after a commit (the committer's hook), or on a quiet worker (a timer). Otherwise no copy is
  made, and the next commit tries again.
* **At most once per** ``OM_STATE_SNAPSHOT_S`` (0: never). The checkpoint file and the copy (RocksDB's
  checkpoint: a flush, then hard links) are made in a thread while the fence is held; the idle timer
  may change the schedule meanwhile, and a copy that fails that way is only made at the next chance.
* **Never across a rebalance**: none is made while one runs (recovery writes the store outside the
  fence), and a copy during which one began is dropped (the partitions that moved have their keys
  dropped from the store outside the fence, so it may hold part of them). Faust's own
  ``app.rebalancing`` and ``app.rebalancing_count`` tell.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class Snapshots:
    def __init__(self, interval_s: float, app: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s, self._app, self._clock = interval_s, app, clock
        self._last = clock()  # the first copy an interval after the start (recovery just read everything)

    def due(self) -> bool:
        return self.interval_s > 0 and self._clock() - self._last >= self.interval_s

    async def take(self, local: Any) -> bool:
        """Copy ``local``'s store (a LocalChangelog) if due and it holds committed records only; the
        caller holds the fence. Returns whether a copy was made."""
        app = self._app
        if local is None or not self.due() or app.rebalancing:
            return False
        rebalances, started = app.rebalancing_count, time.monotonic()
        checkpoint = await asyncio.to_thread(_copy, local)
        if checkpoint is None:
            return False
        if app.rebalancing or app.rebalancing_count != rebalances:
            local.states.parts.drop_snapshot()
            return False
        self._last = self._clock()
        log.info("om.state_store.snapshot", extra={"partitions": sorted(checkpoint.offsets),
                                                   "keys": sum(map(len, checkpoint.keys.values())),
                                                   "seconds": round(time.monotonic() - started, 3)})
        return True


def _copy(local: Any) -> Any:
    """In a thread: the checkpoint of what the store holds (a million keys take ~0.4 s to list,
    which the event loop need not wait for) and the copy, or None if it holds uncommitted records."""
    checkpoint = local.checkpoint()
    if checkpoint is not None:
        local.states.parts.snapshot(checkpoint)
    return checkpoint
