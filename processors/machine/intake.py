"""Taking a chat message into a key's unobserved window (spec §4.1, §7.6).

Rules this module keeps:

* A message id is one message: producing it again *updates* it while it is unobserved and is a
  counted duplicate once observed — so producer retries and replays are idempotent.
* A thread belongs to one resource for life; a message naming another resource is refused, and so
  is a control event about the thread (turns, a provider change, ``updateRecordConfig``, deletion):
  another resource can neither re-tune nor delete it (:func:`check_control_ownership`).
* A late message (event time at or before the cursor) still enters the window — Mastra would treat
  it as observed and lose it (§12.12) — unless it is older than the duplicate memory
  (``LATE_TOLERANCE_MS``), where it cannot be told from a replayed duplicate and is dropped, counted,
  and named in ``Decision.dropped`` (the shell hides the row the sink stored for it).
* With ``temporal_markers``, a gap of ten minutes or more before a user message inserts a
  ``system-reminder`` signal message 1 ms before it; it is observed like any message.
"""

from __future__ import annotations

import bisect
from typing import Any

from processors.context import format_reminder_timestamp, temporal_gap_text
from processors.machine.built import built
from processors.machine.state import LATE_TOLERANCE_MS, TokenMap, in_window_order
from schemas.base import SchemaError
from schemas.control import ThreadControl
from processors.machine.step import Step
from schemas.lifecycle import AppliedThrough
from schemas.messages import ChatMessage, DataPart, TextPart

TEMPORAL_GAP_PREFIX = "__temporal_gap_"
_APPLIED_THROUGH = frozenset({"message_id", "created_at"})


class Rejected(SchemaError):
    """Input the core refuses; the shell sends it to the dead-letter topic with this reason."""


def check_ownership(step: Step, message: ChatMessage) -> None:
    record = step.state.record.__dict__  # the record's fields, read several times (see take_message)
    owner = message.owner if record["scope"] == "thread" else message.resource_id
    _check_owner(record, "message", message.thread_id, owner, "a message may not move it to resource {owner!r} — "
                 "use a new thread id")


def check_control_ownership(step: Step, event: ThreadControl) -> None:
    """The resource a control event names (its thread id when it names none, as Mastra falls back)
    must own the record, as a message's must."""
    owner = event.resource_id or event.thread_id
    _check_owner(step.state.record.__dict__, event.kind, event.thread_id, owner,
                 f"a {event.kind} from resource {{owner!r}} is refused")


def _check_owner(record: dict[str, Any], what: str, thread_id: str, owner: str, refusal: str) -> None:
    """``record`` is the record's field dict; ``refusal`` says why, with ``{owner!r}`` filled in only when it
    is refused (every message is checked)."""
    if record["scope"] == "thread" and thread_id != record["thread_id"]:
        raise Rejected("thread_id", f"{what} for thread {thread_id!r} reached key {record['key']!r}")
    if owner != record["resource_id"]:
        raise Rejected("resource_id", f"thread {thread_id!r} belongs to resource {record['resource_id']!r}; "
                                      + refusal.format(owner=owner))


def take_message(step: Step, message: ChatMessage) -> bool:
    """Fold ``message`` into the window. Returns False when it changed nothing (duplicate, system).

    The message's and the state's fields are read from their field dicts: a model's attribute read goes
    through pydantic's ``__getattr__`` hook, ~5 times a plain object's, and a message's intake made ~20."""
    check_ownership(step, message)
    fields, state = message.__dict__, step.state.__dict__
    mid, at, role = fields["id"], fields["created_at"], fields["role"]
    changes: dict[str, Any] = {  # made with the insert, in one update of the step's state
        "applied_through": built(AppliedThrough, {"message_id": mid, "created_at": at},
                                 _APPLIED_THROUGH),  # from the message's validated fields
        "clock": max(state["clock"], at),
    }
    if role == "system":
        return _unchanged(step, changes)
    if mid in state["observed"]:
        step.count(duplicate_messages=1)
        return _unchanged(step, changes)
    # message_tokens holds exactly the window's ids: a dict lookup spares the scan for a new id
    existing = next((m for m in state["window"] if m.id == mid), None) if mid in state["message_tokens"] else None
    if existing is not None and existing == message:
        step.count(duplicate_messages=1)
        return _unchanged(step, changes)
    cursor = state["record"].last_observed_at
    if existing is None and cursor is not None and at <= cursor - LATE_TOLERANCE_MS:
        step.count(late_messages_dropped=1)
        step.dropped.append(mid)
        return _unchanged(step, changes)
    if existing is not None:
        step.update(window=tuple(m for m in state["window"] if m.id != mid))
    elif step.config.temporal_markers and role == "user":
        _insert_gap_marker(step, message)
    _activity(state, message, changes)
    _insert(step, message, changes)
    return True


def _unchanged(step: Step, changes: dict[str, Any]) -> bool:
    """A message that does not enter the window still moves the clock and ``applied_through``."""
    step.write(changes)
    return False


def _insert(step: Step, message: ChatMessage, changes: dict[str, Any]) -> None:
    """In event-time order (after equal times); the common case, the newest message, appends.

    ``changes`` are further changes made in the same update of the state."""
    state = step.state.__dict__
    at, mid = message.created_at, message.id
    old, old_tokens = state["window"], state["message_tokens"]
    appended = not old or at >= old[-1].created_at
    if appended:
        window = old + (message,)
    else:
        index = bisect.bisect_right([m.created_at for m in old], at)
        window = old[:index] + (message,) + old[index:]
    before = step.pending()  # over ``old``: a replaced message is already out of it
    tokens = TokenMap(old_tokens)
    tokens[mid] = count = step.counter.count_message(message)
    step.set_window(window, tokens, (before or 24) + count, changes,  # a new id appended keeps the map's order
                    in_order=appended and mid not in old_tokens and in_window_order(old_tokens, old))


def _activity(state: dict[str, Any], message: ChatMessage, changes: dict[str, Any]) -> None:
    """The activity times (and the actor's model) a taken message leaves on the state (its field dict)."""
    last_part_at = message.last_activity_at()
    changes["last_message_at"] = max(state["last_message_at"] or 0, last_part_at)
    if message.role == "assistant":
        changes["last_activity_at"] = max(state["last_activity_at"] or 0, last_part_at)
        changes["last_model"] = message.step_model() or state["last_model"]


def _first_part_at(message: ChatMessage) -> int:
    for part in message.parts:
        if not isinstance(part, DataPart) and part.created_at is not None:
            return part.created_at
    return message.created_at


def _insert_gap_marker(step: Step, message: ChatMessage) -> None:
    previous = step.state.last_message_at
    if previous is None:
        return
    gap = _first_part_at(message) - previous
    text = temporal_gap_text(gap)
    if text is None:
        return
    at = message.created_at - 1
    stamp = format_reminder_timestamp(message.created_at, step.config.timezone)
    marker = ChatMessage(
        id=f"{TEMPORAL_GAP_PREFIX}{message.id}",
        thread_id=message.thread_id,
        resource_id=message.resource_id,
        role="signal",
        created_at=at,
        parts=[TextPart(text=f"{text} — {stamp}")],
        metadata={
            "type": "temporal-gap",
            "tag_name": "system-reminder",
            "gap_text": text,
            "gap_ms": gap,
            "timestamp_ms": message.created_at,
            "precedes_message_id": message.id,
        },
    )
    _insert(step, marker, {})
    step.inserted.append(marker)
