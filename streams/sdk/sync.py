"""``SyncOMClient``: the async client for code without an event loop (scripts, Flask, notebooks).

It owns one event loop on a daemon thread and runs each :class:`OMClient` call there, so Kafka
connections are reused across calls instead of being rebuilt by an ``asyncio.run`` per call.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine, Iterable, Iterator
from typing import Any, TypeVar

from schemas.lifecycle import LifecycleEvent
from streams.sdk.client import OMClient
from streams.sdk.events import Since

T = TypeVar("T")


def _blocking(method: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """The same method of :class:`OMClient`, run to completion on the client's loop."""

    @functools.wraps(method)
    def call(self: SyncOMClient, *args: Any, **kwargs: Any) -> T:
        return self._run(method(self.client, *args, **kwargs))

    return call


class SyncOMClient:
    """Blocking twin of :class:`OMClient`, same arguments; use ``with SyncOMClient() as om``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="om-sdk-loop", daemon=True)
        self._thread.start()
        self.client = OMClient(*args, **kwargs)

    def __enter__(self) -> SyncOMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    send = _blocking(OMClient.send)
    send_many = _blocking(OMClient.send_many)
    turn_start = _blocking(OMClient.turn_start)
    turn_end = _blocking(OMClient.turn_end)
    update_record_config = _blocking(OMClient.update_record_config)
    delete_thread = _blocking(OMClient.delete_thread)
    context = _blocking(OMClient.context)
    send_and_context = _blocking(OMClient.send_and_context)
    status = _blocking(OMClient.status)
    recall = _blocking(OMClient.recall)

    def events(self, types: Iterable[str] | None = None, *, thread_id: str | None = None,
               resource_id: str | None = None, since: Since = "now") -> Iterator[LifecycleEvent]:
        """Blocking iterator over lifecycle events; the stream starts before the first ``next``."""
        stream = self.client.events(types, thread_id=thread_id, resource_id=resource_id, since=since)
        self._run(stream.start())

        def iterate() -> Iterator[LifecycleEvent]:
            try:
                while True:
                    yield from self._run(stream.next_batch())
            finally:
                self._run(stream.stop())

        return iterate()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._run(self.client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()
