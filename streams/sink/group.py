"""The sink's place in its consumer group: what a revocation drops, and a loop that crashed reported."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from aiokafka import ConsumerRebalanceListener

from streams.group_predecessor import MemberListener
from streams.restart import error_name
from streams.sink.row_cache import RowCache

log = logging.getLogger(__name__)


class Revocations(ConsumerRebalanceListener):
    """Drops the sink's memory of its context rows when partitions are revoked (another sink may
    write their rows next), and records the member id when the sink has a slot."""

    def __init__(self, cache: RowCache, member: MemberListener | None) -> None:
        self.cache, self.member = cache, member

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.cache.forget()
        if self.member is not None:
            await self.member.on_partitions_revoked(revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        if self.member is not None:
            await self.member.on_partitions_assigned(assigned)


def report_failure(on_failure: Callable[[BaseException], None] | None, task: asyncio.Task[None]) -> None:
    if task.cancelled() or task.exception() is None:
        return
    error = task.exception()
    log.critical("sink.crashed", extra={"error": error_name(error)})
    if on_failure is not None:
        on_failure(error)
