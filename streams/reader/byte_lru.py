"""A least-recently-used map bounded by the bytes of what it holds (the reader's memos).

Rules: an entry counts the size its caller gives; past ``max_bytes`` the least recently used go
first; a value alone over the budget is not kept. Threads may share it: one lock, held only for the
map's own work (computing a value happens outside it, so two callers may both compute one; the
first stored stays).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ByteLRU(Generic[V]):
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._values: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.made = 0  # values computed, for tests and profiles

    def get(self, key: Hashable, make: Callable[[], V], size: Callable[[V], int]) -> V:
        """The value kept under ``key``, else ``make()``, kept if it fits."""
        with self._lock:
            held = self._values.get(key)
            if held is not None:
                self._values.move_to_end(key)
                return held[0]
        value = make()
        self.made += 1
        bytes_ = size(value)
        with self._lock:
            if bytes_ <= self.max_bytes and key not in self._values:
                self._values[key] = (value, bytes_)
                self._bytes += bytes_
                while self._bytes > self.max_bytes:
                    _, (_, dropped) = self._values.popitem(last=False)
                    self._bytes -= dropped
        return value
