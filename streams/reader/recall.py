"""``recall(...)``: the agent's recall tool over ClickHouse (spec §8).

This shell decides which rows to read, reads them with resource-bound queries
(:mod:`streams.reader.recall_queries`, :mod:`streams.reader.observation_vectors`) and hands them
to the pure core (:mod:`processors.recall`), which decides everything the agent sees.

Answers are dicts in the tool's shape (``messages``/``threads``/``results`` …). A request recall
refuses (bad arguments, a thread or cursor outside the active resource) answers
``{"error": "<what to do instead>"}``: the agent reads it like any other tool output. An id
that belongs to another resource gets the same answer as an id that does not exist.
"""

from __future__ import annotations

from typing import Any, Literal

from clickhouse_connect.driver.client import Client
from pydantic import ValidationError

from processors.recall import (
    SEARCH_NOT_CONFIGURED,
    RecallError,
    RecallRequest,
    current_thread_answer,
    cursor_page,
    needs_next_message,
    notice_answer,
    page_answer,
    parse_range,
    part_answer,
    search_answer,
    search_top_k,
    thread_listing_page,
    thread_page,
    threads_answer,
    window_around_cursor,
    window_from_anchor,
)
from processors.tokens import TokenCounter, get_counter
from schemas.messages import ChatMessage
from streams.embeddings import Embedder
from streams.reader import recall_queries as q
from streams.reader.observation_vectors import SearchFilter, search_observation_groups

Scope = Literal["thread", "resource"]
NOT_IN_RESOURCE = "Thread does not belong to the active resource."
NO_CURRENT_THREAD = "Could not resolve the current thread."


def recall(
    client: Client,
    resource_id: str,
    request: dict[str, Any],
    *,
    current_thread_id: str | None = None,
    scope: Scope = "resource",
    search_enabled: bool = False,
    embedder: Embedder | None = None,
    counter: TokenCounter | None = None,
) -> dict[str, Any]:
    """Answer one recall call for ``resource_id``; search needs ``search_enabled`` and an ``embedder``."""
    try:
        parsed = RecallRequest.model_validate(request)
    except ValidationError as error:
        return {"error": _validation_text(error)}
    call = _Call(client, resource_id, parsed, current_thread_id, scope, counter or get_counter())
    try:
        if parsed.wants_current_thread and not current_thread_id:
            raise RecallError(NO_CURRENT_THREAD)
        if parsed.mode == "search":
            return call.search(embedder if search_enabled else None)
        if parsed.mode == "threads":
            return call.threads()
        return call.messages()
    except RecallError as error:
        return {"error": str(error)}


class _Call:
    def __init__(
        self, client: Client, resource_id: str, request: RecallRequest, current: str | None, scope: Scope, counter: TokenCounter
    ) -> None:
        self.client, self.resource, self.req, self.current, self.scope, self.counter = (
            client, resource_id, request, current, scope, counter,
        )

    # -- search ---------------------------------------------------------------------------------
    def search(self, embedder: Embedder | None) -> dict[str, Any]:
        if embedder is None:
            return {"results": SEARCH_NOT_CONFIGURED, "count": 0}
        if not self.req.query:
            raise RecallError('mode="search" needs a query.')
        thread = self.current if self.scope == "thread" else self.req.explicit_thread(self.current)
        where = SearchFilter(thread, self.req.after, self.req.before)
        top_k = search_top_k(self.req.limit, where.narrows)
        hits = search_observation_groups(self.client, embedder, self.resource, self.req.query, limit=top_k.fetched, where=where)
        threads = q.thread_titles(self.client, self.resource, sorted({hit.thread_id for hit in hits}))
        return search_answer(hits, threads, self.current, top_k, self.counter).to_dict()

    # -- threads --------------------------------------------------------------------------------
    def threads(self) -> dict[str, Any]:
        if self.scope == "thread" or self.req.wants_current_thread:
            if not self.current:
                raise RecallError(NO_CURRENT_THREAD)
            found = q.threads(self.client, self.resource, limit=1, thread_id=self.current)
            if not found:
                raise RecallError(NO_CURRENT_THREAD)
            return current_thread_answer(found[0]).to_dict()
        spec = thread_listing_page(self.req.page, self.req.limit)
        fetched = q.threads(
            self.client, self.resource, limit=spec.limit + 1, offset=spec.offset, after=self.req.after, before=self.req.before
        )
        return threads_answer(fetched, spec, self.current).to_dict()

    # -- messages -------------------------------------------------------------------------------
    def messages(self) -> dict[str, Any]:
        explicit = self.req.explicit_thread(self.current) if self.scope == "resource" else None
        cursor = self.req.cursor
        if not cursor:
            thread = explicit or self.current
            if not thread:
                raise RecallError(
                    "There is no current thread and no threadId or cursor was given. Pass a threadId "
                    '(mode="threads" lists them) or a message id as cursor.'
                )
            answer = self._from_anchor(thread)
            if explicit is None and self.scope == "resource":
                answer["messages"] = f"No threadId was given, so this is the current thread {thread}.\n\n{answer['messages']}"
            return answer
        as_range = parse_range(cursor)
        if as_range:
            spec = cursor_page(self.req.page, self.req.limit)
            return notice_answer(self.req, spec, cursor, as_range.hint(cursor)).to_dict()
        if explicit is not None:
            self._require_thread(explicit)
        anchor = self._cursor_message(cursor)
        expected = self.current if self.scope == "thread" else (explicit or self.current)
        if expected is not None and anchor.thread_id != expected:
            if self.scope == "thread":
                raise RecallError(_unknown_cursor(cursor))
            spec = cursor_page(self.req.page, self.req.limit)
            text = (
                f'The cursor "{cursor}" is in thread "{anchor.thread_id}", not in "{expected}". '
                f'Pass threadId="{anchor.thread_id}" to read that thread.'
            )
            return notice_answer(self.req, spec, cursor, text).to_dict()
        if self.req.part_index is not None:
            return self._one_part(anchor)
        return self._around(anchor, cursor)

    def _from_anchor(self, thread_id: str) -> dict[str, Any]:
        if self.scope == "resource":
            self._require_thread(thread_id)
        spec = thread_page(self.req.page, self.req.limit)
        newest_first = self.req.anchor == "end"
        fetched = q.messages_from_end(self.client, self.resource, thread_id, newest_first=newest_first, limit=spec.fetch_count)
        window = window_from_anchor(fetched, spec, self.req.anchor)
        empty = "(this thread has no messages)" if spec.page_index == 0 else f"(no messages on page {spec.page} of this thread)"
        first = window.items[0].id if window.items else ""
        return page_answer(self.req, spec, window, self.counter, cursor=first, empty_text=empty).to_dict()

    def _around(self, anchor: ChatMessage, cursor: str) -> dict[str, Any]:
        spec = cursor_page(self.req.page, self.req.limit)
        fetched = q.messages_next_to(self.client, self.resource, anchor, after=spec.forward, limit=spec.fetch_count)
        window = window_around_cursor(fetched, spec)
        return page_answer(self.req, spec, window, self.counter, cursor=cursor, empty_text="(no messages found)").to_dict()

    def _one_part(self, anchor: ChatMessage) -> dict[str, Any]:
        index = self.req.part_index or 0
        following = None
        if needs_next_message(anchor, index, self.counter):
            nearest = q.messages_next_to(self.client, self.resource, anchor, after=True, limit=1)
            following = nearest[0] if nearest else None
        answer = part_answer(anchor, index, self.req.char_offset, self.counter, next_message=following)
        return answer.to_dict()

    def _require_thread(self, thread_id: str) -> None:
        if not q.threads(self.client, self.resource, limit=1, thread_id=thread_id):
            raise RecallError(NOT_IN_RESOURCE)

    def _cursor_message(self, cursor: str) -> ChatMessage:
        found = q.message_by_id(self.client, self.resource, cursor.strip())
        if found is None:
            raise RecallError(_unknown_cursor(cursor))
        return found


def _unknown_cursor(cursor: str) -> str:
    return f"No message {cursor!r} in this memory. Take a cursor from an observation range or a recall result."


def _validation_text(error: ValidationError) -> str:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in error.errors())
    return f"Invalid recall arguments: {problems}"
