"""The lifecycle invariants, checked on what a key's consumers see: its events, in topic order.

Mastra's own lifecycle fuzz (spec §4.11) checks these inside one process; run across two of its
processes its main branch breaks them thousands of times. Here they are read from the events
topic, so a pipeline run with several workers can count its violations (issue 21: it must show 0).
Each rule, for one key:

1. **Every cycle ends once, at most.** No end or failure comes without its start (same cycle id
   and operation), before it, or twice. A synchronous cycle (``observation-start``) always ends; a
   buffering cycle may end silently, as Mastra's does, when the Observer wrote nothing or the
   messages it buffered left the window meanwhile.
2. **Only buffered work activates, once.** An observation ``activation`` names a buffering cycle
   that ended (not failed) earlier, covers exactly the messages that cycle buffered, and happens at
   most once per cycle.
3. **No message observed twice.** The messages covered by observation activations and synchronous
   observation ends never overlap.
4. **Only the key's messages.** Every message a cycle covers was sent on this key.

Pure: events in (any objects with the lifecycle fields), readable violations out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

STARTS = {"buffering-start": ("buffering-end", "buffering-failed"),
          "observation-start": ("observation-end", "observation-failed")}
ENDS = {end: start for start, ends in STARTS.items() for end in ends}


def violations(events: Iterable[Any], sent: Collection[str]) -> list[str]:
    """``events``: one key's lifecycle events in topic order; ``sent``: that key's message ids."""
    found: list[str] = []
    open_: set[tuple[str, str, str]] = set()  # (start type, cycle, operation)
    closed: set[tuple[str, str, str]] = set()
    buffered: dict[str, tuple[str, ...]] = {}  # observation buffering cycle -> the messages it buffered
    activated: set[str] = set()
    observed: dict[str, str] = {}  # message -> the cycle that observed it
    for event in events:
        kind, cycle = event.type, getattr(event, "cycle_id", "") or ""
        operation = getattr(event, "operation_type", "") or ""
        ids = tuple(getattr(event, "message_ids", ()) or ())
        found.extend(f"{kind} {cycle} covers {m}, never sent on this key" for m in ids if m not in sent)
        if kind in STARTS:
            if (kind, cycle, operation) in open_ or (kind, cycle, operation) in closed:
                found.append(f"{kind} {cycle} ({operation}) started twice")
            open_.add((kind, cycle, operation))
        elif kind in ENDS:
            start = (ENDS[kind], cycle, operation)
            if start not in open_:
                found.append(f"{kind} {cycle} ({operation}) "
                             f"{'ended twice' if start in closed else 'without its start'}")
            open_.discard(start)
            closed.add(start)
            if kind == "buffering-end" and operation == "observation":
                buffered[cycle] = ids
            if kind == "observation-end" and operation == "observation":
                _observe(ids, cycle, observed, found)
        elif kind == "activation" and operation == "observation":
            if cycle not in buffered:
                found.append(f"activation of {cycle}, which never finished buffering")
            elif cycle in activated:
                found.append(f"activation of {cycle} a second time")
            elif set(ids) != set(buffered[cycle]):
                found.append(f"activation of {cycle} covers other messages than it buffered")
            activated.add(cycle)
            _observe(ids, cycle, observed, found)
    found.extend(f"{kind} {cycle} ({operation}) never ended"
                 for kind, cycle, operation in sorted(open_) if kind == "observation-start")
    return found


def _observe(ids: tuple[str, ...], cycle: str, observed: dict[str, str], found: list[str]) -> None:
    for message in ids:
        if message in observed:
            found.append(f"{message} observed twice: by {observed[message]} and by {cycle}")
        observed[message] = cycle
