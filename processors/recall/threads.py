"""Threads mode (spec §8.3): the resource's threads, newest activity first, as agent-readable lines.

Each thread reads as::

    - **<title or (untitled)>**[ ← current]
      id: <thread id>
      updated: <YYYY-MM-DD HH:MM:SSZ> | created: <…>

Pages are 0-based here (unlike messages mode) and hold up to 50 threads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from processors.recall.parts import format_timestamp
from processors.recall.request import MAX_THREAD_LIMIT
from processors.recall.results import ThreadsAnswer

DEFAULT_THREAD_LIMIT = 20
NO_THREADS = "No threads matched."
CURRENT_MARK = " ← current"


@dataclass(frozen=True)
class ThreadInfo:
    id: str
    title: str | None
    created_at: int
    updated_at: int


@dataclass(frozen=True)
class ThreadPage:
    page: int
    limit: int

    @property
    def offset(self) -> int:
        return self.page * self.limit


def thread_listing_page(page: int | None, limit: int | None) -> ThreadPage:
    return ThreadPage(max(0, page or 0), max(1, min(limit or DEFAULT_THREAD_LIMIT, MAX_THREAD_LIMIT)))


def threads_answer(
    fetched: Sequence[ThreadInfo], spec: ThreadPage, current_thread_id: str | None
) -> ThreadsAnswer:
    """``fetched``: up to ``limit + 1`` threads from the page's offset; the extra one means more."""
    shown = list(fetched[: spec.limit])
    if not shown:
        return ThreadsAnswer(threads=NO_THREADS, count=0, page=spec.page, has_more=False)
    text = "\n".join(thread_lines(thread, thread.id == current_thread_id) for thread in shown)
    return ThreadsAnswer(threads=text, count=len(shown), page=spec.page, has_more=len(fetched) > spec.limit)


def current_thread_answer(thread: ThreadInfo) -> ThreadsAnswer:
    """Thread scope, or ``threadId: "current"``: only the current thread (scenario 58)."""
    return ThreadsAnswer(threads=thread_lines(thread, True), count=1, page=0, has_more=False)


def thread_lines(thread: ThreadInfo, is_current: bool) -> str:
    mark = CURRENT_MARK if is_current else ""
    return (
        f"- **{thread.title or '(untitled)'}**{mark}\n"
        f"  id: {thread.id}\n"
        f"  updated: {format_timestamp(thread.updated_at)} | created: {format_timestamp(thread.created_at)}"
    )
