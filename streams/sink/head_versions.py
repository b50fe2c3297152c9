"""Where a stored head column stands, (generation, version), without parsing it again each batch.

Bringing a key's row forward (streams/sink/context_appends.py) starts from where its stored head
stands, and the head column is JSON that holds the whole observation log: parsing ~100 kB per key
and batch to read two numbers was ~2.6 % of the processor's interpreter time at 1,000 msgs/s. A
live key's row is brought forward batch after batch from the row the batch before wrote, whose
head string the row cache hands back as the same object (streams/sink/row_cache.py). Rules this
file keeps:

* **Found by the column's identity**, never by its text (hashing ~100 kB costs about what parsing
  it does): an entry holds its column, so the id cannot be reused while the entry lives.
* **What is remembered is what parsing gives**: a head this sink made is remembered with the two
  numbers it was made from (:meth:`HeadVersions.made`); any other is parsed once.
* **Bounded**: at most ``max_chars`` of columns (mostly shared with the row cache's), least
  recently used dropped first. The sink's two threads (a batch's start, the writer) call it: one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import orjson

Standing = tuple[int, int]  # (generation, version)
NONE: Standing = (-1, 0)  # a key with no head yet


class HeadVersions:
    def __init__(self, max_chars: int = 32 << 20) -> None:
        self.max_chars = max_chars
        self._known: OrderedDict[int, tuple[str, Standing]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def of(self, column: str | None) -> Standing:
        """The (generation, version) of a head column (None: no head yet)."""
        if column is None:
            return NONE
        with self._lock:
            entry = self._known.get(id(column))
            if entry is not None and entry[0] is column:
                self._known.move_to_end(id(column))
                return entry[1]
        fields = orjson.loads(column)
        standing = (fields["generation"], fields["version"])
        self.made(column, standing)
        return standing

    def made(self, column: str, standing: Standing) -> None:
        """``column`` is a head at ``standing``; it is not changed after."""
        if len(column) > self.max_chars:
            return
        with self._lock:
            old = self._known.pop(id(column), None)
            if old is not None:
                self._chars -= len(old[0])
            self._known[id(column)] = (column, standing)
            self._chars += len(column)
            while self._chars > self.max_chars:
                _, (dropped, _) = self._known.popitem(last=False)
                self._chars -= len(dropped)
