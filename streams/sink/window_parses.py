"""The parsed form of the window columns this sink wrote last, and their threads' texts, so bringing a
key forward does not parse its whole window again, nor write out again what it did not change
(streams/sink/context_appends.py, streams/sink/window_texts.py).

A live key's row is brought forward batch after batch, each time from the row the batch before
wrote (streams/sink/row_cache.py hands back the same string objects). Parsing that column is most
of a shortcut's work and grows with the window: ~150 µs for 150 messages (187 kB), ~1.1 ms for 600,
per key and batch. Rules this file keeps:

* **Found by the column's identity, bounded** (streams/sink/by_column.py) as the row cache is (64 MB
  of columns, most of them the row cache's own strings): a live key's column must outlive the batch
  that brings it forward. At 1,000 msgs/s over 10 threads whose windows reached ~1.2 MB, a 16 MB
  bound kept fewer columns than the keys in flight, and a third of the parses missed: orjson.loads of
  the whole window and its text made again, ~7 % of the worker's CPU.
* **A column brought forward leaves when its successor is recorded**: the row cache hands back a
  key's newest row only, so the column it replaced is not asked for again (if it is, it is parsed).
* **Callers never change what they are given**: :meth:`parsed` returns a shallow copy of the
  windows (thread → list of messages) and of their texts; the shortcut replaces a thread's list,
  never edits a list or a message in place, and what is recorded is not changed after (but for the
  texts' id sets, which only grow, under this memo's lock: streams/sink/window_texts.py).
* **A reader in the same process may share a parse** (:meth:`WindowParses.shared`, the embedded
  worker's reader: streams/reader/context_row.py): the lists as recorded, not copied, so it must
  never change them either; a row it holds keeps them alive, never the memo's entry.
"""

from __future__ import annotations

import orjson

from streams.sink.by_column import ByColumn
from streams.sink.window_texts import Message, ThreadText, Windows


class WindowParses:
    def __init__(self, max_chars: int = 64 << 20) -> None:
        self._parses: ByColumn[tuple[dict[str, list[Message]], dict[str, ThreadText]]] = ByColumn(max_chars)
        self.hits = 0  # parses served from memory, for tests and profiles

    def parsed(self, column: str) -> Windows:
        """``orjson.loads(column)``, from memory with its threads' texts when ``column`` is one this
        sink recorded."""
        entry = self._parses.get(column)
        if entry is not None:
            self.hits += 1
            return Windows(dict(entry[0]), entry[1], self._parses.lock)
        return Windows(orjson.loads(column), {}, self._parses.lock)

    def shared(self, column: str) -> dict[str, list[Message]] | None:
        """The windows of ``column`` as recorded (not a copy: never changed by anyone) when it is one
        this sink recorded, else None. Like ``orjson.loads(column)`` but that a message brought
        forward holds its parts and metadata as their JSON (``orjson.Fragment``)."""
        entry = self._parses.get(column)
        return entry[0] if entry is not None else None

    def record(self, column: str, windows: Windows, replaces: str | None = None) -> None:
        """``column`` is what :meth:`Windows.column` of ``windows`` wrote; neither is changed after.
        ``replaces``: the column ``windows`` was parsed from, superseded by ``column``."""
        if replaces is not None and replaces is not column:
            self._parses.drop(replaces)
        self._parses.put(column, (windows.lists, windows.texts))


PARSES = WindowParses()  # the windows this process's sink brought forward last, parsed
