"""The worker restarts itself, in place, when its acknowledged work stops reaching the broker.

The shell around :class:`streams.stall_watch.StallWatch`: the processor reports what it
acknowledged (:meth:`StallGuard.acked`), a timer asks the broker for the group's committed offsets,
and on a stall the process logs what it saw and restarts in place (:mod:`streams.restart`). A graceful
Faust shutdown is not attempted: it waits on the very transactions that are stuck. A transaction
the broker itself forgot (README, "A broker restart can leave a hanging transaction") has no
coordinator to abort it: the restarted ``om run`` aborts it before producing (streams/worker.py).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import faust
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from streams.restart import restart_in_place
from streams.settings import Settings
from streams.stall_watch import Stall, StallWatch


class StallGuard:
    def __init__(self, app: faust.App, settings: Settings) -> None:
        self.watch = StallWatch(limit_s=settings.commit_stall_s)
        self._app = app
        self._bootstrap = settings.kafka_bootstrap
        self._admin: AIOKafkaAdminClient | None = None

    def acked(self, topic: str, partition: int, offset: int) -> None:
        self.watch.acked((topic, partition), offset + 1)

    def install(self) -> None:
        if self.watch.limit_s <= 0:
            return

        @self._app.on_partitions_assigned.connect
        async def keep_assigned(app: faust.App, assigned: set, **_: Any) -> None:
            self.watch.keep_only((tp.topic, tp.partition) for tp in assigned)

        @self._app.timer(interval=min(10.0, max(1.0, self.watch.limit_s / 4)), on_leader=False)
        async def check_commits() -> None:
            committed = await self._committed()
            if committed is None:
                self.watch.broker_unreachable()
                return
            stalls = self.watch.check(committed, time.monotonic())
            if stalls:
                _restart(stalls)

    async def _committed(self) -> dict[tuple[str, int], int] | None:
        try:
            if self._admin is None:
                admin = AIOKafkaAdminClient(bootstrap_servers=self._bootstrap, request_timeout_ms=5000)
                await asyncio.wait_for(admin.start(), 10)
                self._admin = admin
            offsets = await asyncio.wait_for(self._admin.list_consumer_group_offsets(self._app.conf.id), 10)
        except (KafkaError, OSError, asyncio.TimeoutError):
            return None
        return {(tp.topic, tp.partition): meta.offset for tp, meta in offsets.items() if meta.offset >= 0}


def _restart(stalls: list[Stall]) -> None:
    restart_in_place("om.worker.stalled", stalls=[
        {"partition": f"{s.partition[0]}/{s.partition[1]}", "acked": s.acked,  # type: ignore[index]
         "committed": s.committed, "seconds": round(s.seconds, 1)} for s in stalls])
