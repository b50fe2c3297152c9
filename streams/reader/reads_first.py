"""Reads before the sink's writes on the embedded engine's one client (issue 19, the own-writes tail).

The chDB client serialises its calls with a lock that is not fair: the sink's writer thread runs a
batch as a chain of calls and takes the lock again as soon as it lets it go, so a read that came
during a batch (a context the cache does not hold, e.g. a thread's first turn) waited for the
whole batch: up to hundreds of ms on a busy machine. Rules this file keeps:

* Before each of its calls the sink gives way to the reads in flight, for at most ``max_yield_s``
  per call: a read waits for one call of the sink at most, and a stream of reads can slow a batch
  down but never stop it.
* Only the order of calls changes, never what a call does: the sink's batch stays the same chain
  of inserts and queries, each as atomic as before (the guarantees of :mod:`streams.sink.writer`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from clickhouse_connect.driver.client import Client


class ReadsFirst:
    def __init__(self, max_yield_s: float = 0.05) -> None:
        self.max_yield_s = max_yield_s
        self._reads = 0
        self._quiet = threading.Condition()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._quiet:
            self._reads += 1
        try:
            yield
        finally:
            with self._quiet:
                self._reads -= 1
                if not self._reads:
                    self._quiet.notify_all()

    def give_way(self) -> None:
        with self._quiet:
            self._quiet.wait_for(lambda: not self._reads, timeout=self.max_yield_s)

    def reader(self, client: Client) -> Client:
        """``client`` for the reader: its calls count as reads in flight."""
        return _Client(client, self, read=True)  # type: ignore[return-value]

    def writer(self, client: Client) -> Client:
        """``client`` for the sink: each call first gives way to the reads in flight."""
        return _Client(client, self, read=False)  # type: ignore[return-value]


class _Client:
    """The calls that reach the engine go through the gate; everything else is the client's."""

    def __init__(self, client: Client, gate: ReadsFirst, *, read: bool) -> None:
        self._client, self._gate, self._read = client, gate, read

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self._read:
            with self._gate.reading():
                return getattr(self._client, name)(*args, **kwargs)
        self._gate.give_way()
        return getattr(self._client, name)(*args, **kwargs)

    def query(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("query", *args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("command", *args, **kwargs)

    def insert(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("insert", *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)
