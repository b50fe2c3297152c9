"""Which messages-topic records the sink stores by their record alone — one rule, two users.

The sink materialises a chat message straight from the messages topic (it does not wait for the
processor), so it must refuse by the record alone what the processor would refuse by it: a record
that does not decode, or that is not keyed by the message's lookup key under the configured scope
(issue 18 item 4). The processor uses the same rule to know which of its refusals the sink has
stored anyway — a thread another resource owns, an event time too far ahead, a late message — and
sends a ``MessageRefused`` delta for exactly those, so the stored row is hidden (streams/fold.py).
"""

from __future__ import annotations

from processors.machine import lookup_key
from schemas.base import SchemaError, decode
from schemas.messages import ChatMessage
from schemas.record import Scope
from streams.decoded import DECODED


class NotMaterialised(Exception):
    """A messages-topic record the processor refuses by its record alone: it is not stored, and not
    dead-lettered by the sink — the processor reads the same record and dead-letters it, once."""


def decoded_message(value: bytes) -> ChatMessage:
    """The record's chat message (:class:`SchemaError` when it holds none). In the embedded worker the
    fold and the sink both read the messages topic: whichever decodes it first leaves it for the
    other (streams/decoded.py)."""
    return DECODED.shared("message", value, _chat_message)


def _chat_message(value: bytes) -> ChatMessage:
    return decode(ChatMessage, value)


def stored_message(key: bytes | str | None, value: bytes | None, scope: Scope) -> ChatMessage:
    """The message the sink stores for this record, or :class:`NotMaterialised` with the reason."""
    if value is None:
        raise NotMaterialised("empty record (tombstone)")
    try:
        message = decoded_message(value)
    except SchemaError as error:
        raise NotMaterialised(str(error)) from error
    if isinstance(key, bytes):
        key = key.decode(errors="replace")
    own = lookup_key(scope, message.thread_id, message.resource_id)
    if key != own:
        raise NotMaterialised(f"keyed {key!r}, not by the message's lookup key {own!r}")
    return message


def is_stored(key: bytes | None, value: bytes | None, scope: Scope) -> ChatMessage | None:
    """:func:`stored_message`, or None where the sink stores nothing."""
    try:
        return stored_message(key, value, scope)
    except NotMaterialised:
        return None
