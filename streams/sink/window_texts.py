"""A key's windows as a batch changes them, with each thread's JSON text kept beside its list, so a
window brought forward by a few new messages is written out in the time of those messages, not of
the window (streams/sink/context_appends.py; streams/sink/window_parses.py keeps the texts of the
columns it remembers).

Writing a key's whole window out again on each batch that adds a message or two was ~6 % of the
processor's CPU at 1,000 msgs/s (~0.9 ms for 2,000 messages of ~1 kB). Rules this file keeps:

* **The column is what ``orjson.dumps`` writes**, byte for byte: ``{"thread":[message,…],…}`` with the
  threads sorted and the empty ones left out, no spaces (orjson's one format), a thread id written
  by ``orjson.dumps`` too (its escapes). ``tests/unit/test_window_texts.py`` compares the two over
  random windows.
* **A text is of one list object**: a thread whose list was replaced (filtered, re-sorted, new) is
  written out again; one whose list is the very object its text was made for is not.
* **Appending is the one change made without a pass over the window**: messages each later than the
  thread's last one (windows are oldest first: the window query's order, which every change to a
  window keeps) when none of the batch's ids in the thread is in it; the new list is the old one
  and those, its text the old text and theirs (a piece per batch: the column is one join).
  Anything else is the caller's.
* **An id set holds at least its list's ids**: built with the text, then grown in place (under the
  memo's lock) by each append, so a set may also hold ids another window brought forward from the
  same one appended. A message it wrongly finds there only costs the caller's slower way.
* Nothing handed in is changed: lists are replaced, never edited; texts are not changed after.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

Message = dict[str, Any]


@dataclass(frozen=True)
class ThreadText:
    messages: list[Message]  # the list this is the text of
    pieces: tuple[str, ...]  # its JSON but the closing "]": "[m1,m2", ",m3", …
    ids: set[str]  # the ids of ``messages``, and perhaps more (see the rules)


def _text_of(messages: list[Message]) -> ThreadText:
    return ThreadText(messages, (orjson.dumps(messages)[:-1].decode(),), {m["id"] for m in messages})


class Windows:
    """A key's windows: ``lists`` (thread → messages, oldest first) for the caller to replace lists in."""

    def __init__(self, lists: dict[str, list[Message]], texts: Mapping[str, ThreadText], lock: threading.Lock) -> None:
        self.lists = lists
        self.texts = dict(texts)  # thread → the text of the list it was made for
        self._lock = lock

    def append(self, thread: str, added: list[Message], ids: list[str]) -> bool:
        """``added`` (oldest first) at the end of ``thread``'s list, if each is later than every
        message there and none of ``ids`` (the batch's in the thread, system ones too: the window's
        copy of one is dropped) is there, with no pass over the list; False: nothing changed."""
        messages, text = self.lists.get(thread), self.texts.get(thread)
        if not messages or text is None or text.messages is not messages:
            return False
        if min(m["created_at"] for m in added) <= messages[-1]["created_at"]:
            return False
        with self._lock:
            if not text.ids.isdisjoint(ids):
                return False
            text.ids.update(m["id"] for m in added)
        longer = messages + added
        self.lists[thread] = longer
        self.texts[thread] = ThreadText(longer, (*text.pieces, "," + orjson.dumps(added)[1:-1].decode()), text.ids)
        return True

    def column(self) -> str:
        """``orjson.dumps`` of the non-empty lists, threads sorted; after it, ``lists`` are those
        only, and ``texts`` theirs (what streams.sink.window_parses records)."""
        parts, lists, texts = ["{"], {}, {}
        for thread in sorted(self.lists):
            messages = self.lists[thread]
            if not messages:
                continue
            text = self.texts.get(thread)
            if text is None or text.messages is not messages:
                text = _text_of(messages)
            if texts:
                parts.append(",")
            parts += orjson.dumps(thread).decode(), ":", *text.pieces, "]"
            lists[thread], texts[thread] = messages, text
        parts.append("}")
        self.lists, self.texts = lists, texts
        return "".join(parts)
