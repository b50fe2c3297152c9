"""Which threads a resource may read, decided from the lookup key's context rows (every resource's).

A thread resolves to its key's row for the resource when that row has a head; without a head (no
snapshot yet) or, in resource scope, when the head does not list the thread, it resolves only if
the resource has messages in it, and never when another resource's row of the key has a head (it
owns the key). Anything else is None — the reader's :class:`~streams.reader.api.ThreadNotFound`,
the same answer whether the thread exists for another resource or not at all, and after the same
work: one load of the key's rows either way (issue 18: a ~1 ms difference was an existence oracle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from processors.machine import lookup_key
from streams.reader.context_row import ContextRow, Head


@dataclass(frozen=True)
class ThreadView:
    """A thread resolved for a resource: its key and context row."""

    thread_id: str
    resource_id: str
    key: str
    row: ContextRow

    @property
    def head(self) -> Head | None:
        """The head record, None before the first snapshot."""
        return self.row.head


def view_of(scope: str, thread_id: str, resource_id: str, rows: Mapping[str, ContextRow]) -> ThreadView | None:
    """The view, or None where the resource may not read that thread; ``rows`` are the key's rows."""
    own = rows.get(resource_id)
    head = own.head if own is not None else None
    if head is None and any(row.head is not None for resource, row in rows.items() if resource != resource_id):
        return None
    needs_messages = head is None or (scope == "resource" and thread_id not in head.threads)
    if own is None or (needs_messages and thread_id not in own.message_threads):
        return None
    return ThreadView(thread_id, resource_id, lookup_key(scope, thread_id, resource_id), own)  # type: ignore[arg-type]
