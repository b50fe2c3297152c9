"""The agent-side reader: what to send the model for a thread, and the thread's OM status.

Every call is bound to a resource id. A thread another resource owns, or one that does not exist,
is :class:`ThreadNotFound` — the same answer either way, so a caller cannot probe for other
tenants' ids. The context is assembled by the pure core (:func:`processors.context.build.build_context`)
from the head record, its thread metadata and the unobserved messages, so the reader and the
processor cannot disagree about layout.

Concurrent calls on one reader are coalesced (:mod:`streams.reader.coalesce`): the calls waiting
on the same question are answered by one query per table, so an agent host serving many
conversations from one process is not held up by per-query cost on a serialised engine.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import replace
from typing import Any

from clickhouse_connect.driver.client import Client

from processors.config import OMConfig
from processors.context import AgentContext, build_context
from processors.machine import counter_for
from processors.machine import lookup_key
from processors.context import other_conversations_block
from processors.recall.instructions import recall_instructions
from schemas.lifecycle import StatusEvent
from streams.embeddings import Embedder
from streams.reader import queries
from streams.reader.coalesce import Coalescer
from streams.reader.queries import AwaitedMessage, WindowRequest
from streams.reader.recall import recall
from streams.reader.resolve import ThreadView, resolve_many

DEFAULT_WAIT_S = 5.0


class ThreadNotFound(LookupError):
    """No such thread for this resource (it may exist for another one; we do not say)."""


class NotCaughtUp(TimeoutError):
    """The pipeline had not materialised the awaited message before the deadline."""


class Reader:
    def __init__(self, client: Client, config: OMConfig | None = None, *, poll_interval_s: float = 0.01,
                 embedder: Embedder | None = None) -> None:
        self.client = client
        self.config = config or OMConfig()
        self.poll_interval_s = poll_interval_s
        self.embedder = embedder
        self._views = Coalescer(functools.partial(resolve_many, client, self.config.scope))
        self._windows = Coalescer(functools.partial(queries.unobserved_messages, client))
        self._working_memories = Coalescer(functools.partial(queries.working_memories, client))
        self._statuses = Coalescer(functools.partial(queries.latest_statuses, client))
        self._caught_up = Coalescer(functools.partial(queries.caught_up, client))
        self._resource_threads = Coalescer(functools.partial(queries.resource_threads, client))

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
        if self.config.scope == "resource":  # the user's thread list beside the view: all windows in one batch
            view, threads = await asyncio.gather(self._view(thread_id, resource_id),
                                                 self._resource_threads.load(resource_id))
        else:
            view, threads = await self._view(thread_id, resource_id), []
        head = view.head
        window = WindowRequest(resource_id, thread_id, view.key, head.version if head is not None else 0)
        observation = self.config.observation
        tz = head.timezone if head is not None else self.config.timezone
        shows_others = head is not None and bool(head.active_observations.strip())
        others = [t for t in threads if t != thread_id] if shows_others else []
        unobserved, working_memory, *other_windows = await asyncio.gather(  # one coalesced batch of windows
            self._windows.load(window),
            self._working_memories.load(window) if observation.manage_working_memory else _none(),
            *(self._windows.load(replace(window, thread_id=t)) for t in others),
        )
        context = build_context(
            head.active_observations if head is not None else "",
            unobserved,
            now_ms if now_ms is not None else int(time.time() * 1000),
            meta=head.threads.get(thread_id) if head is not None else None,
            continuation_hints=bool(observation.continuation_hints),
            extracted_slugs=[spec.slug for spec in observation.extract if spec.include_previous_extraction],
            retrieval_instructions=self._recall_guidance(),
            working_memory=working_memory,
            timezone=tz,
            other_conversations=other_conversations_block(
                dict(zip(others, other_windows)), thread_id, counter_for(self.config), tz,
                obscure_ids=self.config.obscure_thread_ids) if others else "",
        )
        return replace(context, observed_through=head.last_observed_at if head is not None else None)

    async def status(self, thread_id: str, resource_id: str) -> StatusEvent | None:
        """The newest ``status`` event of the thread's record (token windows, buffers, generation)."""
        view = await self._view(thread_id, resource_id)
        return await self._statuses.load((resource_id, view.key))

    async def wait_for(self, thread_id: str, resource_id: str, message_id: str, *, timeout: float = DEFAULT_WAIT_S) -> None:
        """Poll until ``message_id`` is stored and folded, with a deadline."""
        awaited = AwaitedMessage(resource_id, thread_id, self._key(thread_id, resource_id), message_id)
        deadline = time.monotonic() + timeout
        while not await self._caught_up.load(awaited):
            if time.monotonic() >= deadline:
                raise NotCaughtUp(f"the awaited message was not materialised within {timeout} s")
            await asyncio.sleep(self.poll_interval_s)

    def resolve(self, thread_id: str, resource_id: str) -> ThreadView:
        """The thread's key and head for this resource, or :class:`ThreadNotFound`."""
        return _found(resolve_many(self.client, self.config.scope, [(thread_id, resource_id)])[0], thread_id)

    async def _view(self, thread_id: str, resource_id: str) -> ThreadView:
        return _found(await self._views.load((thread_id, resource_id)), thread_id)

    def _key(self, thread_id: str, resource_id: str) -> str:
        return lookup_key(self.config.scope, thread_id, resource_id)

    def _recall_guidance(self) -> str | None:
        """With retrieval on, the recall guidance (and ``retrieval.instructions`` after it) joins the context."""
        retrieval = self.config.retrieval_config()
        if retrieval is None:
            return None
        return recall_instructions(retrieval.scope, retrieval.instructions, search_enabled=retrieval.vector)


def _found(view: ThreadView | None, thread_id: str) -> ThreadView:
    if view is None:
        raise ThreadNotFound(thread_id)
    return view


async def _none() -> None:
    return None
