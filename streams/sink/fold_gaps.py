"""Whether a sink batch holds the processor's fold of every chat message in it.

A read-your-writes wait ends when the sink has written a message's context row with the fold's
status (:mod:`streams.reader.fold_watch`). The sink's batch of a turn holds the message (messages
topic) and, a few ms later, the fold's status (events topic); once every chat message of the batch
has its status, nothing later can make that batch's context rows more complete for a waiting
agent, so the batch closes at once instead of lingering for more records
(:func:`streams.sink.batches.collect`). Pure: fed the rows each record converts to.

Rules: a message counts by (lookup key, message id) from the messages topic; a fold is a ``status``
event naming it (``applied_message_id``), in either order. A message whose fold never names it (a
refused or repeated one) leaves the batch to the usual linger: later, never wrong.
"""

from __future__ import annotations

from streams.sink.rows import EVENT_COLUMNS, MESSAGE_COLUMNS, Rows

_MESSAGE_ID, _MESSAGE_KEY = MESSAGE_COLUMNS.index("id"), MESSAGE_COLUMNS.index("lookup_key")
_EVENT_KEY, _EVENT_TYPE, _APPLIED = (EVENT_COLUMNS.index(c) for c in ("lookup_key", "type", "applied_message_id"))


class FoldGaps:
    def __init__(self) -> None:
        self._messages: set[tuple[str, str]] = set()
        self._folded: set[tuple[str, str]] = set()

    def message(self, rows: Rows) -> None:
        """A chat message's rows (the messages topic's)."""
        self._messages.update((row[_MESSAGE_KEY], row[_MESSAGE_ID]) for row in rows.rows.get("om_messages", ()))

    def event(self, rows: Rows) -> None:
        """A lifecycle event's rows (the events topic's)."""
        self._folded.update((row[_EVENT_KEY], row[_APPLIED]) for row in rows.rows.get("om_events", ())
                            if row[_EVENT_TYPE] == "status" and row[_APPLIED])

    @property
    def closed(self) -> bool:
        """Chat messages are in the batch, and each one's fold is too."""
        return bool(self._messages) and self._messages <= self._folded
