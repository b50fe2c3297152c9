"""What changed and why: each observation, activation and reflection as a diff of the observation log.

Pure: the events and the generations' logs come in, :class:`Change` objects go out. The rules:

* An observation (``observation-end``) or an activated chunk (``activation``) only appends: its
  diff is the lines it added (the event carries them), linked to the messages it covered.
* A reflection replaces the log with a new generation. Its "before" is the previous generation's
  last log (the record row each generation keeps, which is exactly the log the Reflector read plus
  nothing after). Its "after" is exact for a synchronous reflection (``observation-end`` carries the
  new log). An activated buffered reflection carries no text: its "after" is the reflection the
  buffering cycle produced, followed by the lines of the old log that the new generation still
  holds (the unreflected tail, which activation keeps verbatim) — marked ``approximate``.
* Removed lines are what the memory no longer holds; that is the answer to "what did it forget".
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from schemas.lifecycle import Activation, BufferingEnd, LifecycleEvent, ObservationEnd

Op = Literal["+", "-", " "]
ChangeKind = Literal["observation", "activation", "reflection"]


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    event: ObservationEnd | Activation
    generation: int | None
    lines: list[tuple[Op, str]]
    cycle_events: list[LifecycleEvent] = field(default_factory=list)
    approximate: bool = False
    missing_before: bool = False
    """The previous generation's log is not stored (e.g. an imported record): no removals shown."""

    @property
    def added(self) -> int:
        return sum(1 for op, _ in self.lines if op == "+")

    @property
    def removed(self) -> int:
        return sum(1 for op, _ in self.lines if op == "-")

    @property
    def message_ids(self) -> list[str]:
        return list(self.event.message_ids)

    @property
    def model_call(self) -> ObservationEnd | BufferingEnd | None:
        """The event that reports the model call behind this change (its latency and tokens)."""
        if isinstance(self.event, ObservationEnd):
            return self.event
        ends = [e for e in self.cycle_events if isinstance(e, BufferingEnd)]
        return ends[-1] if ends else None


def kind_of(event: ObservationEnd | Activation) -> ChangeKind:
    if event.operation_type == "reflection":
        return "reflection"
    return "observation" if isinstance(event, ObservationEnd) else "activation"


def reflection_generation(event: ObservationEnd | Activation, generation_after: int | None) -> int | None:
    """The generation a reflection created: an activation names it; a synchronous reflection's
    is the one the next status event reports."""
    return event.generation if isinstance(event, Activation) else generation_after


def build(event: ObservationEnd | Activation, cycle_events: Sequence[LifecycleEvent],
          logs: Mapping[int, str], generation: int | None) -> Change:
    """One change; ``logs`` holds the last log of generations ``generation - 1`` and ``generation``."""
    kind = kind_of(event)
    own = [e for e in cycle_events if getattr(e, "cycle_id", None) == event.cycle_id]
    if kind != "reflection":
        added = _lines(event.observations or "")
        return Change(kind, event, getattr(event, "generation", None), [("+", line) for line in added], own)
    before = logs.get(generation - 1) if generation is not None else None
    after, approximate = _reflected(event, own, before or "", logs.get(generation, "") if generation is not None else "")
    if before is None:
        return Change(kind, event, generation, [("+", line) for line in _lines(after)], own, approximate, True)
    return Change(kind, event, generation, diff(before, after), own, approximate)


def diff(before: str, after: str) -> list[tuple[Op, str]]:
    """A line diff, in the order of the new log, removed lines where they stood in the old one."""
    old, new = _lines(before), _lines(after)
    out: list[tuple[Op, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend((" ", line) for line in old[i1:i2])
            continue
        out.extend(("-", line) for line in old[i1:i2])
        out.extend(("+", line) for line in new[j1:j2])
    return out


def _reflected(event: ObservationEnd | Activation, own: Sequence[LifecycleEvent], before: str,
               next_log: str) -> tuple[str, bool]:
    if isinstance(event, ObservationEnd) and event.observations is not None:
        return event.observations, False
    buffered = [e for e in own if isinstance(e, BufferingEnd) and e.observations is not None]
    reflection = buffered[-1].observations if buffered else ""
    assert reflection is not None
    reflected, kept = set(_lines(reflection)), set(_lines(next_log))
    tail = [line for line in _lines(before) if line in kept and line not in reflected]
    return "\n".join([reflection, *tail]), True


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]
