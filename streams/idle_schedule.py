"""When the idle timer looks at a key: a heap of next check times instead of every key every round.

The timer used to ask every key it held for an idle-tick reason each round; with states past RAM
(streams/state_store.py) that meant reading a million states every few seconds. The core says at
which times a state's reason can change (:func:`processors.machine.idle_tick_times`), so a key is
looked at only when one of them has come.

Rules this module keeps:

* **Set from the state as last written**: each batch's written states set their keys' next check
  (the first of its times; a time already past is due at once), a deleted key is discarded.
* **Written down with the state**: the times travel in the state's changelog record, with a digest
  of the settings they were computed from (:func:`processors.machine.idle_settings`); recovery uses
  them when the digest is this configuration's, and otherwise checks the key at once.
* **A checked key is set again from what the check read** (only times after the check), before the
  timer awaits anything, so a batch that changes the key meanwhile has the last word.
* **One tick per reason**: ``ticked`` holds the reason each key was last ticked for, and forgets a
  key that is deleted or moves away, so it holds live keys only.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable

from processors.config import OMConfig
from processors.machine import KeyState, idle_settings, idle_tick_times

AT_ONCE = 0


class IdleSchedule:
    def __init__(self, config: OMConfig) -> None:
        self.config, self.digest = config, idle_settings(config)
        self._next: dict[str, int] = {}
        self._heap: list[tuple[int, str]] = []
        self.ticked: dict[str, Hashable] = {}  # the reason each key was last ticked for

    def written(self, key: str, state: KeyState | None) -> str:
        """``key`` now has ``state`` (None: deleted); returns the hint its changelog record carries."""
        if state is None:
            self.discard(key)
            return ""
        times = idle_tick_times(state, self.config)
        self._set(key, times[0] if times else None)
        return f"{self.digest} {','.join(map(str, times))}"

    def recovered(self, key: str, hint: str | None) -> None:
        """``key``'s state was read from the changelog with ``hint`` (None: the key is gone)."""
        if hint is None:
            self.discard(key)
            return
        digest, _, times = hint.partition(" ")
        if digest != self.digest:  # other settings, or a record from before hints
            self._set(key, AT_ONCE)
        else:
            self._set(key, int(times.split(",")[0]) if times else None)

    def restore(self, checks: dict[str, int]) -> None:
        """Next checks as :meth:`snapshot` gave them (a kept store adopted: streams/state_checkpoint.py)."""
        self._next.update(checks)
        self._heap.extend((at, key) for key, at in checks.items())
        heapq.heapify(self._heap)

    def snapshot(self) -> dict[str, int]:
        """Each scheduled key's next check time."""
        return dict(self._next)

    def checked(self, key: str, state: KeyState | None, now: int) -> None:
        """The timer read ``state`` at ``now``: next look at the first of its times after ``now``."""
        times = () if state is None else idle_tick_times(state, self.config)
        self._set(key, next((t for t in times if t > now), None))

    def again(self, key: str) -> None:
        """Look at ``key`` in the next round (its tick could not be sent)."""
        self._set(key, AT_ONCE)

    def discard(self, key: str) -> None:
        """``key`` is deleted or moved to another worker."""
        self._next.pop(key, None)
        self.ticked.pop(key, None)

    def due(self, now: int) -> list[str]:
        """The keys whose next check time has come, each once; they are off the schedule until set."""
        out = []
        while self._heap and self._heap[0][0] <= now:
            at, key = heapq.heappop(self._heap)
            if self._next.get(key) == at:
                del self._next[key]
                out.append(key)
        if len(self._heap) > 2 * len(self._next) + 1024:  # stale entries of keys set again: rebuild
            self._heap = [(at, key) for key, at in self._next.items()]
            heapq.heapify(self._heap)
        return out

    def __len__(self) -> int:
        return len(self._next)

    def _set(self, key: str, at: int | None) -> None:
        if at is None:
            self._next.pop(key, None)
        elif self._next.get(key) != at:
            self._next[key] = at
            heapq.heappush(self._heap, (at, key))
