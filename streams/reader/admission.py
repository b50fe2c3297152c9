"""Admission control for the reader's HTTP calls (issue 18 item 9): one tenant cannot starve the others.

Rules this module keeps:

* Two budgets, never shared: ``read`` (context and status, cheap and coalesced) and ``recall``
  (each call scans the resource's messages). A recall flood can take every recall slot and still
  not one read slot.
* Each budget bounds the calls in flight for all tokens together and, within it, per bearer token
  (its fair share); recall also has a per-token token bucket (a sustained rate and a burst).
* A call over a limit is refused at once (:class:`Refused`, an HTTP 429 with ``Retry-After``):
  nothing waits in a queue, so no queue can grow without bound.
* Recall runs on its own threads, as many as its budget admits, never on the default executor
  where the coalesced reads and, in the embedded worker, the sink's ClickHouse inserts run: a
  backlog of recall can no longer delay a read or an insert behind it.
* State is kept per authenticated token (a configured, closed set); a token is never logged and
  never a metric label.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, TypeVar

from streams.settings import Settings

T = TypeVar("T")
Reason = Literal["busy", "token-busy", "token-rate"]
BUSY_RETRY_S = 1


@dataclass(frozen=True)
class Limits:
    """One budget: ``concurrency`` calls in flight in all, ``per_token`` of them for one token;
    ``rate`` admissions a second per token with bursts of ``burst`` (``rate`` 0 = no rate limit)."""

    concurrency: int
    per_token: int
    rate: float = 0.0
    burst: int = 1


class Refused(Exception):
    """Over a limit: answer 429 and let the caller retry after ``retry_after`` seconds."""

    def __init__(self, reason: Reason, retry_after: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class _Bucket:
    def __init__(self, burst: int, now: float) -> None:
        self.tokens = float(burst)
        self.at = now

    def refill(self, limits: Limits, now: float) -> None:
        self.tokens = min(float(limits.burst), self.tokens + (now - self.at) * limits.rate)
        self.at = now


class Pool:
    """One budget's counters, on one event loop (admission never awaits, so it needs no lock)."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.in_flight = 0
        self._clock = clock
        self._by_token: dict[str, int] = {}
        self._buckets: dict[str, _Bucket] = {}

    @contextlib.contextmanager
    def admit(self, token: str) -> Iterator[None]:
        """Hold one slot for ``token`` while the block runs, or raise :class:`Refused`."""
        self._check(token)
        self.in_flight += 1
        self._by_token[token] = self._by_token.get(token, 0) + 1
        try:
            yield
        finally:
            self.in_flight -= 1
            left = self._by_token[token] - 1
            if left:
                self._by_token[token] = left
            else:
                del self._by_token[token]

    def _check(self, token: str) -> None:
        """Concurrency first (it costs nothing to refuse), then the bucket, which spends a token."""
        if self._by_token.get(token, 0) >= self.limits.per_token:
            raise Refused("token-busy", BUSY_RETRY_S)
        if self.in_flight >= self.limits.concurrency:
            raise Refused("busy", BUSY_RETRY_S)
        if self.limits.rate <= 0:
            return
        now = self._clock()
        bucket = self._buckets.setdefault(token, _Bucket(self.limits.burst, now))
        bucket.refill(self.limits, now)
        if bucket.tokens < 1.0:
            raise Refused("token-rate", max(1, math.ceil((1.0 - bucket.tokens) / self.limits.rate)))
        bucket.tokens -= 1.0


class Admission:
    """The reader's two budgets and the recall threads; :meth:`close` when the app stops."""

    def __init__(self, read: Limits, recall: Limits) -> None:
        self.read = Pool(read)
        self.recall = Pool(recall)
        self._recall_threads = ThreadPoolExecutor(max_workers=recall.concurrency, thread_name_prefix="om-recall")

    @classmethod
    def from_settings(cls, settings: Settings) -> Admission:
        return cls(
            Limits(settings.reader_read_concurrency, settings.reader_read_per_token),
            Limits(settings.reader_recall_concurrency, settings.reader_recall_per_token,
                   settings.reader_recall_rate, settings.reader_recall_burst),
        )

    async def in_recall_thread(self, func: Callable[..., T], *args: object) -> T:
        """Run an admitted recall on the recall threads (never the default executor)."""
        return await asyncio.get_running_loop().run_in_executor(self._recall_threads, functools.partial(func, *args))

    def close(self) -> None:
        self._recall_threads.shutdown(wait=False, cancel_futures=True)
