"""Search mode (spec §8.3): the observation groups nearest to a query, as sections an agent can act on.

Each hit names its thread, the raw message range it was observed from (so the agent can pass
either end as a ``cursor``), the group id and the similarity score, then the group text in a code
block. Hits from the current thread and from other threads are labelled differently, because an
agent should treat memory of another conversation with more care. The whole answer stays within
the 2 000-token budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from processors.recall.budget import StringCounter
from processors.recall.cursor import parse_range
from processors.recall.parts import format_timestamp
from processors.recall.render import ANSWER_TOKENS
from processors.recall.results import SearchAnswer
from processors.recall.threads import ThreadInfo
from processors.tokens.truncate import truncate_to_tokens

SEARCH_NOT_CONFIGURED = (
    "Search is not configured for this memory, so mode=\"search\" cannot run. "
    "Use mode=\"threads\" and mode=\"messages\" to browse instead."
)
NO_MATCHES = "No matching memory found."
DEFAULT_TOP_K = 10
MAX_TOP_K = 20


@dataclass(frozen=True)
class SearchHit:
    thread_id: str
    score: float
    group_id: str
    range: str
    text: str
    observed_at: int | None = None


@dataclass(frozen=True)
class TopK:
    shown: int
    fetched: int


def search_top_k(limit: int | None, filtered: bool) -> TopK:
    """How many hits to show, and to fetch: over-fetch when a thread or date filter applies."""
    shown = max(1, min(limit or DEFAULT_TOP_K, MAX_TOP_K))
    fetched = min(MAX_TOP_K, max(3 * shown, shown + 10)) if filtered else shown
    return TopK(shown, fetched)


def search_answer(
    hits: Sequence[SearchHit],
    threads: Mapping[str, ThreadInfo],
    current_thread_id: str | None,
    top_k: TopK,
    counter: StringCounter,
    max_tokens: int = ANSWER_TOKENS,
) -> SearchAnswer:
    shown = list(hits[: top_k.shown])
    if not shown:
        return SearchAnswer(results=NO_MATCHES, count=0)
    text = "\n\n".join(_section(hit, threads.get(hit.thread_id), hit.thread_id == current_thread_id) for hit in shown)
    return SearchAnswer(results=truncate_to_tokens(text, max_tokens, counter), count=len(shown))


def _section(hit: SearchHit, thread: ThreadInfo | None, is_current: bool) -> str:
    if is_current:
        heading, origin = "### Current thread memory", "This memory comes from the current thread."
    else:
        heading, origin = "### Older memory from another thread", "This memory comes from a different thread."
    ends = parse_range(hit.range)
    lines = [heading, "", origin]
    lines.append(f"- thread: {hit.thread_id}" + (f" ({thread.title or '(untitled)'})" if thread else ""))
    if ends:
        lines.append(f"- source: raw messages from ID {ends.start_id} through ID {ends.end_id}")
    else:
        lines.append("- source: raw message range unknown")
    if thread:
        lines.append(f"- thread updated: {format_timestamp(thread.updated_at)}")
    lines.append(f"- observation group: {hit.group_id}")
    lines.append(f"- score: {hit.score:.2f}")
    lines += ["", "```text", hit.text.strip() or "(no observation text)", "```"]
    return "\n".join(lines)
