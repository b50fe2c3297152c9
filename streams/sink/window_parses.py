"""The parsed form of the window columns this sink wrote last, and their threads' texts, so bringing a
key forward does not parse its whole window again, nor write out again what it did not change
(streams/sink/context_appends.py, streams/sink/window_texts.py).

A live key's row is brought forward batch after batch, each time from the row the batch before
wrote (streams/sink/row_cache.py hands back the same string objects). Parsing that column is most
of a shortcut's work and grows with the window: ~150 µs for 150 messages (187 kB), ~1.1 ms for 600,
per key and batch. Rules this file keeps:

* **A parse is found by the column's identity**, never by its text (hashing 187 kB costs about what
  parsing it does): an entry holds its column, so the id cannot be reused while the entry lives.
* **Callers never change what they are given**: :meth:`parsed` returns a shallow copy of the
  windows (thread → list of messages) and of their texts; the shortcut replaces a thread's list,
  never edits a list or a message in place, and what is recorded is not changed after (but for the
  texts' id sets, which only grow, under this memo's lock: streams/sink/window_texts.py).
* **Bounded**: at most ``max_chars`` of columns (their parses take a few times that in memory, their
  texts about as much again, shared along a key's chain of columns), least recently used dropped
  first.
* The sink's threads (a batch's start, the writer) both call it: one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import orjson

from streams.sink.window_texts import Message, ThreadText, Windows


class WindowParses:
    def __init__(self, max_chars: int = 16 << 20) -> None:
        self.max_chars = max_chars
        self._parses: OrderedDict[int, tuple[str, dict[str, list[Message]], dict[str, ThreadText]]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = 0  # parses served from memory, for tests and profiles

    def parsed(self, column: str) -> Windows:
        """``orjson.loads(column)``, from memory with its threads' texts when ``column`` is one this
        sink recorded."""
        with self._lock:
            entry = self._parses.get(id(column))
            if entry is not None and entry[0] is column:
                self._parses.move_to_end(id(column))
                self.hits += 1
                return Windows(dict(entry[1]), entry[2], self._lock)
        return Windows(orjson.loads(column), {}, self._lock)

    def record(self, column: str, windows: Windows) -> None:
        """``column`` is what :meth:`Windows.column` of ``windows`` wrote; neither is changed after."""
        if len(column) > self.max_chars:
            return
        with self._lock:
            old = self._parses.pop(id(column), None)
            if old is not None:
                self._chars -= len(old[0])
            self._parses[id(column)] = (column, windows.lists, windows.texts)
            self._chars += len(column)
            while self._chars > self.max_chars:
                _, (dropped, _, _) = self._parses.popitem(last=False)
                self._chars -= len(dropped)
