"""When the worker copies its local store for a start after a crash (issue 20 items 4 and 5).

A store kept at a clean stop is adopted by the next start (streams/state_checkpoint.py); a store
whose process died holds what uncommitted transactions wrote, so it is not. Its snapshot is: a copy
made when the store held committed records only, with the checkpoint of what it holds
(streams/state_store.py ``PartStore.copy`` and ``publish``). A start after a kill -9 or a restart in place then
reads only the changelog after the snapshot, not all of it.

Rules this module keeps:

* **Copied at a commit's boundary, under the fence.** The caller holds the processor's fence (no
  batch writes the store meanwhile) and the tracker must say that nothing uncommitted is in the
  store: right after a commit (the committer's hook), or on a quiet worker (the timer). Otherwise no
  copy is made, and the next commit tries again.
* **Little done under the fence.** When a copy is due, the timer first writes the store's memtable
  out in a thread without the fence (:meth:`Snapshots.prepare`); under it, the checkpoint's parts are
  copied whole in memory (:meth:`LocalChangelog.capture`) and RocksDB's checkpoint (a flush of what
  came since, then hard links) is made in a thread; the checkpoint file is built and the copy becomes
  ``snapshot/`` afterwards, off the fence (:meth:`PartStore.publish`). One copy at a time, at most
  one per ``OM_STATE_SNAPSHOT_S`` (0: never).
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

import faust

from streams import metrics

log = logging.getLogger(__name__)


def install(app: faust.App, table: Any, fence: asyncio.Lock, interval_s: float) -> None:
    """Wire the state ``table``'s store keeping into the worker: its tracker told of each commit
    (streams/commit_together.py), a copy tried after each commit that committed (under the fence:
    ``app.om_after_commit``, streams/app.py) and prepared, or taken on a quiet worker, by a timer."""
    snapshots = Snapshots(interval_s, app)

    async def after_commit() -> None:
        try:
            await snapshots.take(table.opened)
        except Exception as error:  # noqa: BLE001 - a copy not made only means a longer read after a crash
            log.warning("om.state_store.snapshot_failed", extra={"error": type(error).__name__})

    app.om_after_commit.append(after_commit)  # type: ignore[attr-defined]

    @app.timer(interval=min(max(interval_s, 0.5), 5.0))
    async def snapshot_when_due() -> None:
        if snapshots.due():
            try:
                await snapshots.prepare(table.opened)
            except Exception as error:  # noqa: BLE001 - the copy's own flush does it then
                log.warning("om.state_store.flush_failed", extra={"error": type(error).__name__})
            async with fence:
                await after_commit()

    @app.on_partitions_assigned.connect
    async def track_commits(app: faust.App, assigned: set, **_: Any) -> None:
        app.producer.on_commit = table.local.tracker.committed


class Snapshots:
    def __init__(self, interval_s: float, app: Any, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s, self._app, self._clock = interval_s, app, clock
        self._last = clock()  # the first copy an interval after the start (recovery just read everything)
        self._prepared = False
        self._publishing: asyncio.Future | None = None

    def due(self) -> bool:
        return self.interval_s > 0 and self._clock() - self._last >= self.interval_s

    async def prepare(self, local: Any) -> None:
        """Without the fence, when a copy is due: write the memtable out, so the copy's is short."""
        if local is not None and self.due():
            await asyncio.to_thread(local.states.parts.flush)
            self._prepared = True

    async def take(self, local: Any) -> bool:
        """Copy ``local``'s store (a LocalChangelog) if one is due and prepared and the store holds
        committed records only; the caller holds the fence. Returns whether a copy was made."""
        app = self._app
        if local is None or not (self._prepared and self.due()) or app.rebalancing or self._publishing is not None:
            return False
        captured = local.capture()
        if captured is None:
            return False
        rebalances, started = app.rebalancing_count, time.monotonic()
        parts = local.states.parts
        if not await asyncio.to_thread(parts.copy):
            return False
        if app.rebalancing or app.rebalancing_count != rebalances:
            await asyncio.to_thread(parts.publish, None)
            return False
        self._last, self._prepared = self._clock(), False
        self._publishing = asyncio.ensure_future(self._publish(parts, captured, time.monotonic() - started))
        return True

    async def published(self) -> None:
        """Until the copy being made is the snapshot (tests)."""
        if self._publishing is not None:
            await asyncio.shield(self._publishing)

    async def _publish(self, parts: Any, captured: Any, held_s: float) -> None:
        try:
            checkpoint = await asyncio.to_thread(captured.checkpoint)
            await asyncio.to_thread(parts.publish, checkpoint)
            if checkpoint is not None:
                metrics.STATE_SNAPSHOT_TIME.set(time.time())
                metrics.STATE_SNAPSHOT_FENCE.observe(held_s)
                log.info("om.state_store.snapshot", extra={
                    "partitions": sorted(checkpoint.offsets), "keys": sum(map(len, checkpoint.keys.values())),
                    "fence_s": round(held_s, 3)})
        except Exception as error:  # noqa: BLE001 - a snapshot not made only means a longer read after a crash
            log.warning("om.state_store.snapshot_failed", extra={"error": type(error).__name__})
        finally:
            self._publishing = None
