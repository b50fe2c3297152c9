"""The agent-side reader: what to send the model for a thread, and the thread's OM status.

Every call is bound to a resource id. A thread another resource owns, or one that does not exist,
is :class:`ThreadNotFound` — the same answer either way, so a caller cannot probe for other
tenants' ids. The context is assembled by the pure core (:func:`processors.context.build.build_context`)
from the head record, its thread metadata and the unobserved messages, so the reader and the
processor cannot disagree about layout.

One lookup per call (issue 19 item 1): ``context()`` and ``status()`` read the lookup key's context
rows (``om_contexts``, which the sink keeps current from the tables it writes) in one primary-key
query, or from the version-checked cache when this process's sink is the only writer
(:mod:`streams.reader.context_cache`). Concurrent calls on one reader are coalesced
(:mod:`streams.reader.coalesce`) into one query for the whole batch.
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from clickhouse_connect.driver.client import Client

from processors.config import OMConfig
from processors.context import AgentContext, build_context, day_key
from processors.machine import counter_for
from processors.machine import lookup_key
from processors.context import other_conversations_block
from processors.recall.instructions import recall_instructions
from schemas.lifecycle import StatusEvent
from schemas.messages import ChatMessage
from streams.embeddings import Embedder
from streams.reader import queries
from streams.reader.actor_texts import ActorTexts
from streams.reader.byte_lru import ByteLRU
from streams.reader.coalesce import Coalescer
from streams.reader.context_cache import ContextCache, KeyRows
from streams.reader.fold_watch import FoldWatch, Polling, Wait
from streams.reader.context_json import context_json, stored_context_json
from streams.reader.context_row import LastDecoded
from streams.reader.queries import AwaitedMessage
from streams.reader.recall import recall
from streams.reader.resolve import ThreadView, view_of

DEFAULT_WAIT_S = 5.0


class _Stamp(NamedTuple):
    """A stored window entry as the context's assembly reads it (``build_context`` sorts the window
    by ``created_at`` and takes the first one's ``thread_id``), and its place in the window."""

    created_at: int
    thread_id: str
    n: int


class ThreadNotFound(LookupError):
    """No such thread for this resource (it may exist for another one; we do not say)."""


class NotCaughtUp(TimeoutError):
    """The pipeline had not materialised the awaited message before the deadline."""


class Reader:
    def __init__(self, client: Client, config: OMConfig | None = None, *, poll_interval_s: float = 0.01,
                 embedder: Embedder | None = None, cache: ContextCache | None = None,
                 folds: FoldWatch | None = None, landed: Callable[[], Awaitable[None]] | None = None) -> None:
        """``cache``, ``folds`` and ``landed``: only where this process's sink is the rows' only writer
        and feeds them (the embedded worker); without ``folds`` a wait polls every ``poll_interval_s``.
        ``landed`` returns once what the sink collected so far is in the tables (streams/sink/landings.py)."""
        self.client = client
        self.config = config or OMConfig()
        self.embedder = embedder
        self._rows = Coalescer(functools.partial(queries.context_rows, client))
        self._cache = cache
        self._waits: FoldWatch | Polling = folds or Polling(poll_interval_s)
        self._awaited = Coalescer(functools.partial(queries.awaited, client))
        self._applied = Coalescer(functools.partial(queries.applied_ids, client))
        self._landed = landed
        self._actor_texts = ActorTexts()
        self._bodies: ByteLRU[bytes] = ByteLRU(16 << 20)
        self._handed = LastDecoded()  # the rows handed to waits (streams/reader/context_row.py)

    async def tables_landed(self) -> None:
        """Before a read of the tables themselves (recall): what a wait was handed before its insert
        is in them. The context and status come from the rows handed over, and need not wait."""
        if self._landed is not None:
            await self._landed()

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
        view = await self._awaited_view(thread_id, resource_id, wait_for_message_id, timeout)
        return self._assemble(view, thread_id, now_ms if now_ms is not None else int(time.time() * 1000))

    async def context_body(self, thread_id: str, resource_id: str, *, chat: bool = True,
                           wait_for_message_id: str | None = None, timeout: float = DEFAULT_WAIT_S,
                           now_ms: int | None = None) -> bytes:
        """The HTTP body of :meth:`context` (streams/reader/context_json.py): the response model's JSON,
        or with ``chat=False`` the lean body, whose messages are the row's stored entries. Kept by the
        row's version (16 MB of bodies at most): a context reads its row and "now" only through
        ``day_key`` (the actor text's dates), so one version of a row on one day gives the same bytes
        (a read-heavy thread: one assembly a turn)."""
        view = await self._awaited_view(thread_id, resource_id, wait_for_message_id, timeout)
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        row = view.row
        key = (row.key, row.resource_id, row.version, thread_id, day_key(now, self._zone(view)), chat)
        return self._bodies.get(key, lambda: self._body(view, thread_id, resource_id, now, chat), len)

    def _body(self, view: ThreadView, thread_id: str, resource_id: str, now: int, chat: bool) -> bytes:
        if chat:
            return context_json(thread_id, resource_id, self._assemble(view, thread_id, now))
        # the window's messages stay the row's JSON: the assembly sees each one's time and thread only
        entries = view.row.entries(thread_id)
        stamps = [_Stamp(entry["created_at"], entry["thread_id"], n) for n, entry in enumerate(entries)]
        context = self._assemble(view, thread_id, now, stamps)  # type: ignore[arg-type]
        return stored_context_json(thread_id, resource_id, context, [entries[stamp.n] for stamp in context.messages])

    async def _awaited_view(self, thread_id: str, resource_id: str, wait_for_message_id: str | None,
                            timeout: float) -> ThreadView:
        if wait_for_message_id is None:
            return await self._view(thread_id, resource_id)
        rows = await self._covering(thread_id, resource_id, wait_for_message_id, timeout)
        return _found(view_of(self.config.scope, thread_id, resource_id, rows), thread_id)  # the rows the wait saw

    def _zone(self, view: ThreadView) -> str:
        return view.head.timezone if view.head is not None else self.config.timezone

    def _assemble(self, view: ThreadView, thread_id: str, now: int, window: list[ChatMessage] | None = None) -> AgentContext:
        """The context of ``view`` now; ``window``: the thread's messages, when not the row's own."""
        row, head = view.row, view.head
        observation = self.config.observation
        tz = self._zone(view)
        recall = self._recall_guidance()
        observed = head is not None and bool(head.active_observations.strip())
        # the log's actor text: made once per log and day
        shown = self._actor_texts.get(head.active_observations, now, tz, grouped=bool(recall)) if observed else None
        shows_others = self.config.scope == "resource" and observed
        others = [t for t in row.speaking_threads if t != thread_id] if shows_others else []
        context = build_context(
            head.active_observations if head is not None else "",
            row.window(thread_id) if window is None else window,
            now,
            meta=head.threads.get(thread_id) if head is not None else None,
            continuation_hints=bool(observation.continuation_hints),
            extracted_slugs=[spec.slug for spec in observation.extract if spec.include_previous_extraction],
            retrieval_instructions=recall,
            shown_observations=shown,
            working_memory=row.working_memory if observation.manage_working_memory else None,
            timezone=tz,
            other_conversations=row.derived(
                ("other conversations", thread_id, tz, self.config.obscure_thread_ids, self.config.token_counter),
                lambda: other_conversations_block({t: row.window(t) for t in others}, thread_id,
                                                  counter_for(self.config), tz,
                                                  obscure_ids=self.config.obscure_thread_ids)) if others else "",
        )
        return replace(context, observed_through=head.last_observed_at if head is not None else None)

    async def status(self, thread_id: str, resource_id: str) -> StatusEvent | None:
        """The newest ``status`` event of the thread's record (token windows, buffers, generation)."""
        return (await self._view(thread_id, resource_id)).row.status

    async def wait_for(self, thread_id: str, resource_id: str, message_id: str, *, timeout: float = DEFAULT_WAIT_S) -> None:
        """Until the processor's fold of ``message_id`` is stored and the thread's context covers
        the message, with a deadline (:class:`NotCaughtUp` after it)."""
        await self._covering(thread_id, resource_id, message_id, timeout)

    async def _covering(self, thread_id: str, resource_id: str, message_id: str, timeout: float) -> KeyRows:
        """The key's rows once the fold is stored and the resource's row covers the message.

        The sink writes (and hands the cache) a batch's context rows before its events, so once the fold
        is visible the row is at least that new; a row that still misses the message waits for the
        message itself. Between looks the wait sleeps until the sink writes a context row or an event
        of the key (embedded) or for the poll interval (:mod:`streams.reader.fold_watch`)."""
        key = self._key(thread_id, resource_id)
        awaited = AwaitedMessage(resource_id, thread_id, key, message_id)
        deadline = time.monotonic() + timeout
        with self._waits.watching(awaited) as wait:
            while True:
                rows = await self._covered(awaited, wait)
                if rows is not None:
                    return rows
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise NotCaughtUp(f"the awaited message was not materialised within {timeout} s")
                await wait.next(remaining)

    async def _covered(self, awaited: AwaitedMessage, wait: Wait) -> KeyRows | None:
        """The key's rows if the fold of the message is stored and the row shows the message, else None.
        A fold the sink reported or remembers (embedded: streams/reader/fold_memory.py) and a row
        listing the message need no query; else one query says whether the fold is stored (unless
        the sink said so) and which observation, if any, covers the message."""
        if not wait.folded and not wait.looked:
            remembered = await self._waits.folded(awaited, self._applied_ids)
            if remembered is not None:
                wait.looked = True
                if not remembered:
                    return None
                wait.folded = True
        if wait.folded:
            rows = await self._handed_rows(awaited, wait)
            own = rows.get(awaited.resource_id)
            if own is not None and own.covers(awaited.message_id, None):
                return rows
        elif wait.told_every_fold and wait.looked:  # told of no fold since a look found none
            return None
        folded, observed_at = await self._awaited.load(awaited)
        wait.looked = True
        if folded:
            wait.folded = True
        if not wait.folded:  # the sink reports a fold just before it inserts the event
            return None
        rows = await self._handed_rows(awaited, wait)
        own = rows.get(awaited.resource_id)
        return rows if own is not None and own.covers(awaited.message_id, observed_at) else None

    async def _applied_ids(self, key: tuple[str, str]) -> frozenset[str]:
        """The message ids the ``(resource, key)``'s stored status events applied. A key the table
        never held has none: the sink stores a key's context row before its events."""
        if self._cache is not None and self._cache.never_stored(key[1]):
            return frozenset()
        return await self._applied.load(key)

    async def _handed_rows(self, awaited: AwaitedMessage, wait: Wait) -> KeyRows:
        """The key's rows, the caller's own being the row the sink handed the wait when that is newer
        (the embedded sink hands a row before it inserts it). Without a cached entry to place it in,
        the caller's row alone: all its context reads, and no query that would find the table behind."""
        if wait.row is None:
            return await self._key_rows(awaited.key)
        cached = self._cache.get(awaited.key) if self._cache is not None else None
        own = cached.get(awaited.resource_id) if cached is not None else None
        if own is not None and own.version >= int(wait.row[-1]):
            return cached
        handed = self._handed.decoded(wait.row)  # heir to the key's row handed before
        return {**cached, awaited.resource_id: handed} if cached is not None else {awaited.resource_id: handed}

    def resolve(self, thread_id: str, resource_id: str) -> ThreadView:
        """The thread's key and context row for this resource, or :class:`ThreadNotFound`."""
        rows = queries.context_rows(self.client, [self._key(thread_id, resource_id)])[0]
        return _found(view_of(self.config.scope, thread_id, resource_id, rows), thread_id)

    async def _view(self, thread_id: str, resource_id: str) -> ThreadView:
        rows = await self._key_rows(self._key(thread_id, resource_id))
        return _found(view_of(self.config.scope, thread_id, resource_id, rows), thread_id)

    async def _key_rows(self, key: str) -> KeyRows:
        """Every resource's row of ``key``: from the cache while no newer row was written, else one query."""
        if self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        rows = await self._rows.load(key)
        if self._cache is not None:
            rows = self._cache.put(key, rows)  # with the rows announced and not inserted yet
        return rows

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
