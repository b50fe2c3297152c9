"""Which messages may be buffered while a tool call is still open (spec §4.4.3, §4.4 step 3).

A pending tool call's result will arrive later as more parts of the same message (or a message with
the same ``tool_call_id``). Buffering the call without its result would observe half a tool pair and,
because a chunk's cursor is ``max(created_at) + 1 ms``, could hide the result forever. So the newest
message is held back while it has a pending call, and the whole cut is deferred when it is unsafe.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from schemas.messages import ChatMessage, StepStartPart, ToolInvocationPart


_created_at = attrgetter("created_at")


def _pending_call_ids(message: ChatMessage) -> set[str]:
    return {
        p.tool_call_id
        for p in message.parts
        if isinstance(p, ToolInvocationPart) and p.is_pending
    }


def _call_ids(message: ChatMessage) -> set[str]:
    return {p.tool_call_id for p in message.parts if isinstance(p, ToolInvocationPart)}


def select_safe_buffer_prefix(candidates: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The candidates that can be buffered now; ``[]`` means "defer until the call resolves"."""
    ordered = sorted(candidates, key=_created_at)
    if not ordered:
        return []
    newest_at = ordered[-1].created_at
    newest = ordered[_newest_from(ordered):]
    pending = [m for m in newest if _pending_call_ids(m)]
    if not pending:
        return ordered
    if len(newest) > 1:
        return []
    open_message = pending[0]
    open_ids = _pending_call_ids(open_message)
    kept = ordered[:-1]
    for message in kept:
        if message.created_at + 1 >= newest_at or _call_ids(message) & open_ids:
            return []
    return kept


def has_incomplete_tool_calls(window: Sequence[ChatMessage]) -> bool:
    """Whether the newest message's latest step still waits for a tool result.

    Observing now would cut a tool pair in half, so the synchronous observation waits a step.
    The window is in event-time order (:func:`processors.machine.intake._insert` keeps it so), so
    the newest message is found from its end: the first of the messages that share the last time,
    as ``max`` over the whole window would pick, without a pass over a window that a lagging
    Observer lets grow to thousands of messages (this ran at every step above the threshold).
    """
    if not window:
        return False
    newest = window[_newest_from(window)]
    latest_step: list = []
    for part in newest.parts:
        if isinstance(part, StepStartPart):
            latest_step = []
        else:
            latest_step.append(part)
    return any(isinstance(p, ToolInvocationPart) and p.is_pending for p in latest_step)


def _newest_from(messages: Sequence[ChatMessage]) -> int:
    """Where the messages with the last ``created_at`` begin, in messages in event-time order: a walk
    back from the end, not a pass over them all (a window a lagging Observer lets grow to thousands)."""
    at = len(messages) - 1
    newest_at = messages[at].created_at
    while at > 0 and messages[at - 1].created_at == newest_at:
        at -= 1
    return at
