"""The agent-side reader: what to send the model for a thread, and the thread's OM status.

Every call is bound to a resource id. A thread another resource owns, or one that does not exist,
is :class:`ThreadNotFound` — the same answer either way, so a caller cannot probe for other
tenants' ids. The context is assembled by the pure core (:func:`processors.context.build_context`)
from the head record, its thread metadata and the unobserved messages, so the reader and the
processor cannot disagree about layout.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.client import Client

from processors.config import OMConfig
from processors.context import AgentContext, build_context
from processors.lookup import lookup_key
from processors.recall.instructions import recall_instructions
from schemas.lifecycle import StatusEvent
from streams.embeddings import Embedder
from streams.reader import queries
from streams.reader.recall import recall
from streams.reader.queries import Head

DEFAULT_WAIT_S = 5.0


class ThreadNotFound(LookupError):
    """No such thread for this resource (it may exist for another one; we do not say)."""


class NotCaughtUp(TimeoutError):
    """The pipeline had not materialised the awaited message before the deadline."""


@dataclass(frozen=True)
class ThreadView:
    """A thread resolved for a resource: its key and head record (None before the first snapshot)."""

    thread_id: str
    resource_id: str
    key: str
    head: Head | None


class Reader:
    def __init__(self, client: Client, config: OMConfig | None = None, *, poll_interval_s: float = 0.01,
                 embedder: Embedder | None = None) -> None:
        self.client = client
        self.config = config or OMConfig()
        self.poll_interval_s = poll_interval_s
        self.embedder = embedder

    def recall(self, resource_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """The recall tool with this pipeline's retrieval settings (scope, search when configured)."""
        retrieval = self.config.retrieval_config()
        search = retrieval is not None and retrieval.vector and self.embedder is not None
        return recall(self.client, resource_id, request, scope=retrieval.scope if retrieval else "resource",
                      search_enabled=search, embedder=self.embedder if search else None)

    async def context(
        self,
        thread_id: str,
        resource_id: str,
        *,
        wait_for_message_id: str | None = None,
        timeout: float = DEFAULT_WAIT_S,
        now_ms: int | None = None,
    ) -> AgentContext:
        """The messages the agent should send next (spec §7); ``now_ms`` anchors relative dates.

        With ``wait_for_message_id``, first wait until that message and the processor's fold of it
        are materialised (read-your-writes), or raise :class:`NotCaughtUp` after ``timeout``.
        """
        if wait_for_message_id is not None:
            await self.wait_for(thread_id, resource_id, wait_for_message_id, timeout=timeout)
        return await asyncio.to_thread(self._context, thread_id, resource_id, now_ms)

    async def status(self, thread_id: str, resource_id: str) -> StatusEvent | None:
        """The newest ``status`` event of the thread's record (token windows, buffers, generation)."""
        return await asyncio.to_thread(self._status, thread_id, resource_id)

    async def wait_for(self, thread_id: str, resource_id: str, message_id: str, *, timeout: float = DEFAULT_WAIT_S) -> None:
        """Poll until ``message_id`` is stored and folded, with a deadline."""
        key = self._key(thread_id, resource_id)
        deadline = time.monotonic() + timeout
        while not await asyncio.to_thread(queries.caught_up, self.client, resource_id, thread_id, key, message_id):
            if time.monotonic() >= deadline:
                raise NotCaughtUp(f"the awaited message was not materialised within {timeout} s")
            await asyncio.sleep(self.poll_interval_s)

    def resolve(self, thread_id: str, resource_id: str) -> ThreadView:
        """The thread's key and head for this resource, or :class:`ThreadNotFound`."""
        key = self._key(thread_id, resource_id)
        head = queries.head(self.client, resource_id, key)
        if head is None:
            if queries.owned_elsewhere(self.client, resource_id, key):
                raise ThreadNotFound(thread_id)
            if not queries.thread_has_messages(self.client, resource_id, thread_id):
                raise ThreadNotFound(thread_id)
        elif self.config.scope == "resource" and thread_id not in head.threads:
            if not queries.thread_has_messages(self.client, resource_id, thread_id):
                raise ThreadNotFound(thread_id)
        return ThreadView(thread_id, resource_id, key, head)

    def _key(self, thread_id: str, resource_id: str) -> str:
        return lookup_key(self.config.scope, thread_id, resource_id)

    def _context(self, thread_id: str, resource_id: str, now_ms: int | None) -> AgentContext:
        view = self.resolve(thread_id, resource_id)
        head = view.head
        version = head.version if head is not None else 0
        unobserved = queries.unobserved_messages(self.client, resource_id, thread_id, view.key, version)
        observation = self.config.observation
        return build_context(
            head.active_observations if head is not None else "",
            unobserved,
            now_ms if now_ms is not None else int(time.time() * 1000),
            meta=head.threads.get(thread_id) if head is not None else None,
            continuation_hints=bool(observation.continuation_hints),
            extracted_slugs=[spec.slug for spec in observation.extract if spec.include_previous_extraction],
            retrieval_instructions=self._recall_guidance(),
            working_memory=(queries.working_memory(self.client, resource_id, view.key)
                            if observation.manage_working_memory else None),
            timezone=head.timezone if head is not None else self.config.timezone,
        )

    def _recall_guidance(self) -> str | None:
        """With retrieval on, the recall guidance (and ``retrieval.instructions`` after it) joins the context."""
        retrieval = self.config.retrieval_config()
        if retrieval is None:
            return None
        return recall_instructions(retrieval.scope, retrieval.instructions, search_enabled=retrieval.vector)

    def _status(self, thread_id: str, resource_id: str) -> StatusEvent | None:
        view = self.resolve(thread_id, resource_id)
        return queries.latest_status(self.client, resource_id, view.key)
