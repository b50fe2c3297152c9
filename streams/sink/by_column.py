"""What the sink worked out from a column string it wrote or read, kept by the string's identity.

A live key's row is brought forward batch after batch from the row the batch before wrote, and the
row cache hands back the very string objects (streams/sink/row_cache.py), so what was worked out
from a column — its parsed windows (streams/sink/window_parses.py), where its head stands
(streams/sink/head_versions.py) — can be found again without reading ~100 kB of JSON. Rules this
file keeps:

* **Found by the column's identity**, never by its text (hashing ~100 kB costs about what parsing
  it does): an entry holds its column, so the id cannot be reused while the entry lives.
* **Bounded**: at most ``max_chars`` of columns (mostly shared with the row cache's), least recently
  used dropped first.
* The sink's two threads (a batch's start, the writer) call it: one lock, :attr:`ByColumn.lock`,
  which a user may also hold for what it keeps beside an entry.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class ByColumn(Generic[V]):
    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.lock = threading.Lock()
        self._entries: OrderedDict[int, tuple[str, V]] = OrderedDict()
        self._chars = 0

    def get(self, column: str) -> V | None:
        """What was kept for this very string object, if anything."""
        with self.lock:
            entry = self._entries.get(id(column))
            if entry is None or entry[0] is not column:
                return None
            self._entries.move_to_end(id(column))
            return entry[1]

    def drop(self, column: str) -> None:
        """Forget what was kept for this very string object, if anything."""
        with self.lock:
            entry = self._entries.get(id(column))
            if entry is not None and entry[0] is column:
                del self._entries[id(column)]
                self._chars -= len(column)

    def put(self, column: str, value: V) -> None:
        """Keep ``value`` for ``column`` (neither is changed after)."""
        if len(column) > self.max_chars:
            return
        with self.lock:
            old = self._entries.pop(id(column), None)
            if old is not None:
                self._chars -= len(old[0])
            self._entries[id(column)] = (column, value)
            self._chars += len(column)
            while self._chars > self.max_chars:
                _, (dropped, _) = self._entries.popitem(last=False)
                self._chars -= len(dropped)
