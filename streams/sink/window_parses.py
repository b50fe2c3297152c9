"""The parsed form of the window columns this sink wrote last, so bringing a key forward does not
parse its whole window again (streams/sink/context_appends.py).

A live key's row is brought forward batch after batch, each time from the row the batch before
wrote (streams/sink/row_cache.py hands back the same string objects). Parsing that column is most
of a shortcut's work and grows with the window: ~150 µs for 150 messages (187 kB), ~1.1 ms for 600,
per key and batch. Rules this file keeps:

* **A parse is found by the column's identity**, never by its text (hashing 187 kB costs about what
  parsing it does): an entry holds its column, so the id cannot be reused while the entry lives.
* **Callers never change what they are given**: :meth:`parsed` returns a shallow copy of the
  windows (thread → list of messages); the shortcut replaces a thread's list, never edits a list or
  a message in place, and what is recorded is not changed after.
* **Bounded**: at most ``max_chars`` of columns (their parses take a few times that in memory),
  least recently used dropped first.
* The sink's threads (a batch's start, the writer) both call it: one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import orjson

Windows = dict[str, list[dict[str, Any]]]


class WindowParses:
    def __init__(self, max_chars: int = 16 << 20) -> None:
        self.max_chars = max_chars
        self._parses: OrderedDict[int, tuple[str, Windows]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = 0  # parses served from memory, for tests and profiles

    def parsed(self, column: str) -> Windows:
        """``orjson.loads(column)``, from memory when ``column`` is one this sink recorded."""
        with self._lock:
            entry = self._parses.get(id(column))
            if entry is not None and entry[0] is column:
                self._parses.move_to_end(id(column))
                self.hits += 1
                return dict(entry[1])
        return orjson.loads(column)

    def record(self, column: str, windows: Windows) -> None:
        """``windows`` is what ``column`` parses to; neither is changed after."""
        if len(column) > self.max_chars:
            return
        with self._lock:
            old = self._parses.pop(id(column), None)
            if old is not None:
                self._chars -= len(old[0])
            self._parses[id(column)] = (column, windows)
            self._chars += len(column)
            while self._chars > self.max_chars:
                _, (dropped, _) = self._parses.popitem(last=False)
                self._chars -= len(dropped)
