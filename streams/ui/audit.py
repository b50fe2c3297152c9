"""The thread page's "what changed and why": each change as a diff, with its cause (streams/ui/changes.py).

A page of the key's changes (observations, activated chunks, reflections), newest first, each with
what it added and (for a reflection) what the memory no longer holds, the messages it covered, the
events of its cycle and the model call behind it. Unchanged runs of the log are folded.
"""

from __future__ import annotations

from collections.abc import Sequence

from processors.config import ModelByInputTokens, OMConfig
from schemas.lifecycle import Activation, ObservationEnd
from streams.reader.api import Reader
from streams.reader.resolve import ThreadView
from streams.ui import queries
from streams.ui.changes import Change, build, kind_of, reflection_generation
from streams.ui.render import esc, event_summary, pager, url, when

CHANGES_PER_PAGE = 8
CHANGE_TYPES = ("observation-end", "activation")
CONTEXT_LINES = 2


def model_name(config: OMConfig, role: str) -> str:
    choice = config.observer_model() if role == "observer" else config.reflector_model()
    return "tiered by input size" if isinstance(choice, ModelByInputTokens) else str(choice)


def changes_section(reader: Reader, view: ThreadView, page_no: int, here: str, cycle: str) -> str:
    client = reader.client
    total, rows = queries.events(client, view.resource_id, view.key, CHANGE_TYPES, CHANGES_PER_PAGE,
                                 (page_no - 1) * CHANGES_PER_PAGE, cycle=cycle)
    if not rows:
        return '<p class="muted">nothing observed yet</p>'
    cycles = queries.cycle_events(client, view.resource_id, view.key, sorted({r.event.cycle_id for r in rows}))
    generations: dict[int, int | None] = {}
    for n, row in enumerate(rows):
        event = row.event
        assert isinstance(event, (ObservationEnd, Activation))
        if kind_of(event) == "reflection":
            after = (queries.generation_after(client, view.resource_id, view.key, event.at, row.offset)
                     if isinstance(event, ObservationEnd) else None)
            generations[n] = reflection_generation(event, after)
    wanted = [g + d for g in generations.values() if g is not None for d in (-1, 0)]
    logs = queries.observation_logs(client, view.resource_id, view.key, wanted)
    shown = [_change(reader, view, build(row.event, cycles, logs, generations.get(n)))  # type: ignore[arg-type]
             for n, row in enumerate(rows)]
    return "".join(shown) + pager(total, page_no, CHANGES_PER_PAGE, here, "changes")


def _change(reader: Reader, view: ThreadView, change: Change) -> str:
    event = change.event
    role = "reflector" if change.kind == "reflection" else "observer"
    heading = {"observation": "Observation", "activation": "Activation of a buffered chunk",
               "reflection": f"Reflection into generation {change.generation if change.generation is not None else '?'}"}
    why = [f"{change.added} line(s) added"]
    if change.kind == "reflection":
        why.append(f"<b>{change.removed} line(s) no longer held</b>" if change.removed else "nothing dropped")
    call = change.model_call
    if call is not None:
        why.append(f"model call {call.duration_ms:,} ms")
    why.append(f"{role} <code>{esc(model_name(reader.config, role))}</code>")
    trigger = getattr(event, "triggered_by", None)
    if trigger:
        why.append(f"triggered by {esc(trigger)}")
    if change.approximate:
        why.append('<span class="note">tail kept verbatim, inferred</span>')
    if change.missing_before:
        why.append('<span class="note">the previous generation is not stored</span>')
    covered = ""
    if change.message_ids:
        link = url("messages", resource=view.resource_id, thread=view.thread_id, which="cycle", cycle=event.cycle_id)
        covered = (f'<p>covered {len(change.message_ids)} message(s) <code>{esc(event.range or "")}</code> · '
                   f'<a href="{esc(link)}">the messages</a></p>')
    produced = "".join(f"<li>{when(e.at)} · <b>{esc(e.type)}</b> ({esc(getattr(e, 'operation_type', ''))}) · "
                       f"{event_summary(e)}</li>" for e in change.cycle_events)
    events = (f'<details id="cycle-{esc(event.cycle_id)}"><summary>{len(change.cycle_events)} event(s) of cycle '
              f"<code>{esc(event.cycle_id)}</code></summary><ul>{produced}</ul></details>")
    return (f'<article class="change kind-{change.kind}" data-kind="{change.kind}" data-cycle="{esc(event.cycle_id)}">'
            f"<h3>{heading[change.kind]} · {when(event.at)}</h3>"
            f'<p class="why">{" · ".join(why)}</p>{covered}{events}{_diff(change.lines)}</article>')


def _diff(lines: Sequence[tuple[str, str]]) -> str:
    """The diff with long unchanged runs folded to their first and last lines."""
    out, n = [], 0
    while n < len(lines):
        op, text = lines[n]
        if op != " ":
            cls = "add" if op == "+" else "del"
            out.append(f'<div class="{cls}">{esc(op)} {esc(text)}</div>')
            n += 1
            continue
        end = n
        while end < len(lines) and lines[end][0] == " ":
            end += 1
        run = lines[n:end]
        if len(run) > 2 * CONTEXT_LINES + 1:
            head, tail = run[:CONTEXT_LINES] if n else [], run[-CONTEXT_LINES:] if end < len(lines) else []
            out.extend(f'<div class="same">  {esc(t)}</div>' for _, t in head)
            out.append(f'<div class="fold">… {len(run) - len(head) - len(tail)} unchanged line(s)</div>')
            out.extend(f'<div class="same">  {esc(t)}</div>' for _, t in tail)
        else:
            out.extend(f'<div class="same">  {esc(t)}</div>' for _, t in run)
        n = end
    return f'<div class="diff">{"".join(out)}</div>'
