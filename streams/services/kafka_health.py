"""Is a Kafka broker answering? Asked with a real Metadata request, not just an open port.

An open port only proves the JVM bound its socket; a broker that has not finished starting (or
a different program on that port) fails the Metadata request, which is what clients need first.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from aiokafka import AIOKafkaClient
from aiokafka.errors import KafkaConnectionError, KafkaError

from streams.llm.retry import RetryPolicy
from streams.services.kafka_retry import Deadline, KafkaUnavailable, ride_through

T = TypeVar("T")
log = logging.getLogger(__name__)
_START_BACKOFF = RetryPolicy(base_delay=0.2, max_delay=5.0, jitter=0.2)


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


async def metadata_ok(bootstrap: str, timeout: float = 5.0) -> bool:
    """One Metadata round trip that lists at least one broker, within ``timeout`` seconds."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout * 1000))
    try:
        await asyncio.wait_for(client.bootstrap(), timeout)
        return bool(client.cluster.brokers())
    except (KafkaError, OSError, asyncio.TimeoutError):
        return False
    finally:
        await client.close()


def is_healthy(bootstrap: str, timeout: float = 5.0) -> bool:
    """Blocking form of :func:`metadata_ok`; it skips the request when nothing listens at all."""
    host, port = bootstrap.split(",")[0].strip().rsplit(":", 1)
    if not port_accepts(host, int(port)):
        return False
    return _run_blocking(metadata_ok(bootstrap, timeout))


def wait_healthy(bootstrap: str, deadline: float, still_starting: Callable[[], bool] = lambda: True) -> bool:
    """Poll until healthy, ``time.monotonic()`` passes ``deadline`` or ``still_starting()`` is False."""
    while time.monotonic() < deadline:
        if is_healthy(bootstrap, timeout=min(5.0, max(0.5, deadline - time.monotonic()))):
            return True
        if not still_starting():
            return False
        time.sleep(0.2)
    return False


def _run_blocking(coro: Coroutine[Any, Any, bool]) -> bool:
    """``asyncio.run`` that also works when called from code already inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def start_when_reachable(start: Callable[[], Awaitable[T]], bootstrap: str, who: str,
                               give_up_after_s: float = 300.0) -> T:
    """Retry ``start`` while the broker cannot be reached: a broker restarting just as a service
    starts should delay the service, not end it. Other errors (bad config, auth) fail at once."""
    def report(line: str) -> None:
        log.warning("kafka.unreachable", extra={"who": who, "bootstrap": bootstrap, "detail": line})

    try:
        return await ride_through(start, bootstrap=bootstrap, deadline=Deadline(give_up_after_s), report=report,
                                  transient=lambda error: isinstance(error, KafkaConnectionError),
                                  policy=_START_BACKOFF)
    except KafkaUnavailable as gave_up:
        raise gave_up.last from None
