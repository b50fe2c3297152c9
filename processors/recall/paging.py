"""Which messages a page holds, and whether there are more on either side (spec §8.3).

The reader asks the store for ``fetch_count`` visible messages (``skip + limit + 1``) in the
direction the page goes; the one extra message beyond the page is the look-ahead that decides
``hasNextPage``/``hasPrevPage`` without a count query. Both functions here get those rows in
query order and return the page oldest-first (or newest-first for ``anchor: "end"``).

* Relative to a cursor: page ``p > 0`` is the ``p``-th page strictly after the cursor, ``p < 0``
  the ``|p|``-th page strictly before it (page 0 reads as 1; ±50 at most).
* From an end of a thread: page 1… from the oldest message (``anchor: "start"``) or from the
  newest (``anchor: "end"``, shown newest first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from processors.recall.request import MAX_MESSAGE_LIMIT, MAX_PAGE

T = TypeVar("T")
DEFAULT_LIMIT = 20


@dataclass(frozen=True)
class PageSpec:
    page: int
    limit: int

    @property
    def page_index(self) -> int:
        return abs(self.page) - 1

    @property
    def skip(self) -> int:
        return self.page_index * self.limit

    @property
    def fetch_count(self) -> int:
        return self.skip + self.limit + 1

    @property
    def forward(self) -> bool:
        return self.page > 0


@dataclass(frozen=True)
class Window(Generic[T]):
    items: list[T]
    has_next_page: bool
    has_prev_page: bool


def cursor_page(page: int | None, limit: int | None) -> PageSpec:
    """Scenario 57: page 0 → 1, limit clamped to 1…20."""
    raw = 1 if not page else page
    return PageSpec(max(-MAX_PAGE, min(raw, MAX_PAGE)), _message_limit(limit))


def thread_page(page: int | None, limit: int | None) -> PageSpec:
    """Pages from an end of a thread count 1…50; anything lower reads as 1."""
    return PageSpec(max(1, min(page or 1, MAX_PAGE)), _message_limit(limit))


def window_around_cursor(fetched: Sequence[T], spec: PageSpec) -> Window[T]:
    """``fetched``: visible messages after the cursor ascending (forward) or before it descending."""
    has_more = len(fetched) > spec.skip + spec.limit
    if spec.forward:
        items = list(fetched[spec.skip : spec.skip + spec.limit])
        return Window(items, has_more, spec.page_index > 0)
    items = list(reversed(fetched[spec.skip : spec.skip + spec.limit]))
    return Window(items, spec.page_index > 0, has_more)


def window_from_anchor(fetched: Sequence[T], spec: PageSpec, anchor: Literal["start", "end"]) -> Window[T]:
    """``fetched``: visible messages from the anchored end of the thread, nearest first."""
    items = list(fetched[spec.skip : spec.skip + spec.limit])
    if not items:
        return Window([], False, spec.page_index > 0)
    beyond = len(fetched) > spec.skip + len(items)
    if anchor == "end":
        return Window(items, spec.page_index > 0, beyond)
    return Window(items, beyond, spec.page_index > 0)


def _message_limit(limit: int | None) -> int:
    return max(1, min(limit or DEFAULT_LIMIT, MAX_MESSAGE_LIMIT))
