"""The observation log as the actor reads it, kept by content, so a read does not make it again.

:func:`processors.context.observations_for_actor` makes the log leaner and dates it relative to now
(~5 ms of CPU for a 45 kB log when this memo was written, the largest part of a read whose row
comes from the cache; the core now remembers the leaner lines, and the dating is what is left). It reads
"now" only through :func:`processors.context.day_key`, and the log changes only when observations
do, while every turn brings its key a new row (a new version, decoded anew): so the text is kept
under (log, zone, recall grouping, day key), not per row. Rules this file keeps:

* **Same answer as computing it.** The key holds everything the text depends on (a test in
  tests/unit/context/test_day_key.py shows instants of one day key give one text).
* **Bounded by bytes**: each entry counts its log and its text; the least recently read go first
  once ``max_bytes`` is passed (a log alone over the budget is computed and not kept).
* The reader's loop and any other thread may ask (streams/reader/byte_lru.py).
"""

from __future__ import annotations

from processors.context import day_key, observations_for_actor
from streams.reader.byte_lru import ByteLRU


class ActorTexts:
    def __init__(self, max_bytes: int = 32 << 20) -> None:
        self._texts: ByteLRU[str] = ByteLRU(max_bytes)

    @property
    def made(self) -> int:
        return self._texts.made

    def get(self, log: str, now_ms: int, tz: str, *, grouped: bool) -> str:
        return self._texts.get((log, tz, grouped, day_key(now_ms, tz)),
                               lambda: observations_for_actor(log, now_ms, tz, grouped=grouped),
                               lambda text: len(log) + len(text))
