"""Transient-error classification and retry with exponential backoff and jitter (spec §4.12).

Mastra retries 8 times with delays 1, 2, 4 … capped at 120 s (±20 %), not configurable; here
the same defaults are a :class:`RetryPolicy` a worker can tighten, and ``sleep``/``rng`` are
injectable so tests never wait. Cancellation is never retried (it is not an ``Exception``).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

T = TypeVar("T")

_TRANSIENT_PHRASES = (
    "terminated", "fetch failed", "econnreset", "econnrefused", "enotfound", "eai_again",
    "socket hang up", "network error", "request timed out", "request timeout",
    "connection reset", "connection closed", "timed out", "temporarily unavailable", "overloaded",
)
_TRANSIENT_STATUS = frozenset({408, 425, 429})


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 8
    base_delay: float = 1.0
    max_delay: float = 120.0
    jitter: float = 0.2


class RetryError(Exception):
    """The last error of a call that will not be retried any more."""

    def __init__(self, last: Exception, attempts: int, transient: bool) -> None:
        super().__init__(f"{type(last).__name__}: {last}")
        self.last = last
        self.attempts = attempts
        self.transient = transient


def is_transient(error: BaseException) -> bool:
    """Walks ``__cause__``/``__context__`` and ``.error``/``.cause`` attributes, like Mastra's."""
    seen: set[int] = set()
    stack: list[BaseException] = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, (asyncio.CancelledError, KeyboardInterrupt)):
            return False
        if _transient_here(current):
            return True
        for linked in (current.__cause__, current.__context__, getattr(current, "error", None), getattr(current, "cause", None)):
            if isinstance(linked, BaseException):
                stack.append(linked)
    return False


def backoff_delay(policy: RetryPolicy, retry: int, rng: random.Random | None = None) -> float:
    """Delay before retry number ``retry`` (0-based): base·2^retry, capped, ± jitter."""
    delay = min(policy.max_delay, policy.base_delay * (2**retry))
    spread = (rng or random).uniform(-policy.jitter, policy.jitter)
    return max(0.0, delay * (1 + spread))


async def with_retry(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: random.Random | None = None,
    on_retry: Callable[[int, Exception, float], None] | None = None,
) -> tuple[T, int]:
    """``(result, attempts)``; raises :class:`RetryError` once retrying stops.

    ``on_retry(attempts_so_far, error, delay)`` is told before each backoff (the client logs it)."""
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt(), attempts
        except Exception as exc:  # classified below; cancellation passes through untouched
            transient = is_transient(exc)
            if not transient or attempts > policy.max_retries:
                raise RetryError(exc, attempts, transient) from exc
            delay = backoff_delay(policy, attempts - 1, rng)
            if on_retry is not None:
                on_retry(attempts, exc, delay)
            await sleep(delay)


def _transient_here(error: BaseException) -> bool:
    if getattr(error, "isRetryable", None) is True or getattr(error, "is_retryable", None) is True:
        return True
    for attribute in ("status_code", "statusCode", "status", "code"):
        status = getattr(error, attribute, None)
        if isinstance(status, str) and status.upper().startswith("UND_ERR_"):
            return True
        if isinstance(status, str) and status.isdigit():
            status = int(status)
        if isinstance(status, int) and not isinstance(status, bool):
            # a definite client error (bad request, auth) stays permanent whatever its text says
            return status in _TRANSIENT_STATUS or 500 <= status <= 599
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    message = str(error).lower()
    return any(phrase in message for phrase in _TRANSIENT_PHRASES)
