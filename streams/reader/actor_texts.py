"""The observation log as the actor reads it, kept by content, so a read does not make it again.

:func:`processors.context.observations_for_actor` makes the log leaner and dates it relative to now
(~5 ms of CPU for a 45 kB log, the largest part of a read whose row comes from the cache). It reads
"now" only through :func:`processors.context.day_key`, and the log changes only when observations
do, while every turn brings its key a new row (a new version, decoded anew): so the text is kept
under (log, zone, recall grouping, day key), not per row. Rules this file keeps:

* **Same answer as computing it.** The key holds everything the text depends on (a test in
  tests/unit/context/test_day_key.py shows instants of one day key give one text).
* **Bounded by bytes**: each entry counts its log and its text; the least recently read go first
  once ``max_bytes`` is passed (a log alone over the budget is computed and not kept).
* The reader's loop and any other thread may ask: one lock, held only for the lookups.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from processors.context import day_key, observations_for_actor

Key = tuple[str, str, bool, tuple[object, bool]]


class ActorTexts:
    def __init__(self, max_bytes: int = 32 << 20) -> None:
        self.max_bytes = max_bytes
        self._texts: OrderedDict[Key, str] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.made = 0  # texts computed, for tests and profiles

    def get(self, log: str, now_ms: int, tz: str, *, grouped: bool) -> str:
        key = (log, tz, grouped, day_key(now_ms, tz))
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
                return text
        text = observations_for_actor(log, now_ms, tz, grouped=grouped)
        self.made += 1
        size = len(log) + len(text)
        with self._lock:
            if size <= self.max_bytes and key not in self._texts:
                self._texts[key] = text
                self._bytes += size
                while self._bytes > self.max_bytes:
                    (old_log, *_), old_text = self._texts.popitem(last=False)
                    self._bytes -= len(old_log) + len(old_text)
        return text
