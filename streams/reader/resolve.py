"""Which threads a resource may read, for a batch of ``(thread, resource)`` requests at once.

A thread resolves to its key and head record when the head is the resource's; without a head (no
snapshot yet) or, in resource scope, when the head does not list the thread, it resolves only if
the resource has messages in it, and never when another resource owns the key. Anything else is
None — the reader's :class:`~streams.reader.api.ThreadNotFound`, the same answer whether the
thread exists for another resource or not at all, and after the same queries (issue 18: a ~1 ms
difference was an existence oracle). The ownership queries run only for headless requests, so the
common case is one query for the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clickhouse_connect.driver.client import Client

from processors.machine import lookup_key
from streams.reader import queries
from streams.reader.queries import Head

ThreadRequest = tuple[str, str]
"""``(thread_id, resource_id)``, as the reader's callers name a thread."""


@dataclass(frozen=True)
class ThreadView:
    """A thread resolved for a resource: its key and head record (None before the first snapshot)."""

    thread_id: str
    resource_id: str
    key: str
    head: Head | None


def resolve_many(client: Client, scope: str, requests: Sequence[ThreadRequest]) -> list[ThreadView | None]:
    """One view per request, or None where the resource may not read that thread."""
    keys = [(resource, lookup_key(scope, thread, resource)) for thread, resource in requests]
    views = [ThreadView(thread, resource, key, head) for (thread, resource), (_, key), head
             in zip(requests, keys, queries.heads(client, keys), strict=True)]
    refused: set[int] = set()
    headless = [n for n, view in enumerate(views) if view.head is None]
    if headless:
        owned = queries.owned_elsewhere(client, [keys[n] for n in headless])
        refused |= {n for n, elsewhere in zip(headless, owned, strict=True) if elsewhere}
    # asked even for the refused ones: a thread another resource owns must cost what a missing one
    # costs, or the answer's timing tells them apart
    unlisted = [n for n, view in enumerate(views) if _needs_messages(scope, view)]
    if unlisted:
        present = queries.threads_with_messages(client, [(views[n].resource_id, views[n].thread_id) for n in unlisted])
        refused |= {n for n, has in zip(unlisted, present, strict=True) if not has}
    return [None if n in refused else view for n, view in enumerate(views)]


def _needs_messages(scope: str, view: ThreadView) -> bool:
    """Whether only the thread's own messages can prove it is the resource's."""
    return view.head is None or (scope == "resource" and view.thread_id not in view.head.threads)
