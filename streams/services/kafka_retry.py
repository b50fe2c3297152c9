"""Riding through a broker loss: which Kafka errors pass, and how long a tool waits for them.

Rules kept (issue 26):
* Transient: an unreachable bootstrap address or node, a leader election (``NotLeaderForPartition``,
  ``NodeNotReady``, ``LeaderNotAvailable``, ``RequestTimedOut``), ``NotEnoughReplicas`` — every
  error aiokafka marks retriable, plus timeouts and socket errors. A missing topic, bad config,
  authorisation or a fenced producer are permanent and fail at once.
* Backoff is the LLM client's (:func:`streams.llm.retry.backoff_delay`: doubling, capped, jittered),
  cut to what is left of the deadline; before each wait one progress line is reported.
* The deadline (``OM_KAFKA_RETRY_S``, default 120 s) counts from the first failure (progress
  starts it afresh); past it the call raises :class:`KafkaUnavailable`, whose message is one
  readable line with what to run next.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiokafka.errors import KafkaError, KafkaTimeoutError, UnknownTopicOrPartitionError

from streams.llm.retry import RetryPolicy, backoff_delay

T = TypeVar("T")
Report = Callable[[str], None]
KAFKA_BACKOFF = RetryPolicy(base_delay=1.0, max_delay=10.0, jitter=0.2)
NEXT_STEP = "check the broker (`om services status`), then run the same command again (nothing is duplicated)"


class KafkaUnavailable(RuntimeError):
    """The broker did not come back within the deadline; ``str()`` is the line a person reads."""

    def __init__(self, bootstrap: str, waited_s: float, last: BaseException, next_step: str = NEXT_STEP) -> None:
        super().__init__(f"Kafka at {bootstrap} still failing after {waited_s:.0f} s "
                         f"({describe(last)}); {next_step}")
        self.last = last


def is_transient(error: BaseException) -> bool:
    if isinstance(error, UnknownTopicOrPartitionError):
        return False
    if isinstance(error, KafkaError):
        return bool(error.retriable) or isinstance(error, KafkaTimeoutError)
    return isinstance(error, (OSError, asyncio.TimeoutError))


def describe(error: BaseException) -> str:
    text = str(error).strip()
    name = type(error).__name__
    if not text or text.startswith(name):  # aiokafka's errors already start with their name
        return text or name
    return f"{name}: {text}"


def progress_line(bootstrap: str, error: BaseException, delay: float) -> str:
    """``broker 127.0.0.1:19092 unreachable, retrying in 2 s`` (what failed, when the next try is)."""
    state = "unreachable" if isinstance(error, (OSError, asyncio.TimeoutError)) or "onnect" in type(error).__name__ \
        else f"not ready ({describe(error)})"
    return f"broker {bootstrap} {state}, retrying in {max(1, round(delay))} s"


class Deadline:
    """Started at the first failure: ``remaining()`` seconds are left to keep trying."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self.clock = seconds, clock
        self.started: float | None = None

    def start(self, already_s: float = 0.0) -> None:
        """The failure began now, or ``already_s`` ago (a stall noticed only after a while)."""
        if self.started is None:
            self.started = self.clock() - already_s

    def reset(self) -> None:
        """Progress was made: the next failure starts a fresh deadline."""
        self.started = None

    def remaining(self) -> float:
        return self.seconds if self.started is None else self.seconds - (self.clock() - self.started)

    def waited(self) -> float:
        return 0.0 if self.started is None else self.clock() - self.started


async def ride_through(attempt: Callable[[], Awaitable[T]], *, bootstrap: str, deadline: Deadline, report: Report,
                       transient: Callable[[BaseException], bool] = is_transient,
                       policy: RetryPolicy = KAFKA_BACKOFF, rng: random.Random | None = None,
                       sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> T:
    """``attempt()`` until it succeeds, a permanent error (raised as is) or the deadline passes."""
    retry = 0
    while True:
        try:
            return await attempt()
        except Exception as error:
            if not transient(error):
                raise
            deadline.start()
            left = deadline.remaining()
            if left <= 0:
                raise KafkaUnavailable(bootstrap, deadline.waited(), error) from error
            delay = min(backoff_delay(policy, retry, rng), left)
            retry += 1
            report(progress_line(bootstrap, error, delay))
            await sleep(delay)
