"""The recall tool's pure core (spec §8): request, paging, rendering, instructions, search answers.

Nothing here reads storage. The reader (``streams/reader/recall.py``) runs the queries these
modules ask for (a page spec says how many rows to fetch and in which direction) and passes the
rows back in; every rule about what the agent sees lives here and is tested without a database.
"""

from processors.recall.cursor import RangeCursor, parse_range
from processors.recall.groups import ObservationGroup, embedding_chunks, parse_observation_groups
from processors.recall.instructions import recall_instructions
from processors.recall.messages import notice_answer, page_answer
from processors.recall.paging import PageSpec, Window, cursor_page, thread_page, window_around_cursor, window_from_anchor
from processors.recall.request import RecallRequest
from processors.recall.results import MessagesAnswer, PartAnswer, RecallError, SearchAnswer, ThreadsAnswer
from processors.recall.search import SEARCH_NOT_CONFIGURED, SearchHit, search_answer, search_top_k
from processors.recall.single_part import needs_next_message, part_answer
from processors.recall.threads import ThreadInfo, current_thread_answer, thread_listing_page, threads_answer

__all__ = [
    "SEARCH_NOT_CONFIGURED",
    "MessagesAnswer",
    "ObservationGroup",
    "PageSpec",
    "PartAnswer",
    "RangeCursor",
    "RecallError",
    "RecallRequest",
    "SearchAnswer",
    "SearchHit",
    "ThreadInfo",
    "ThreadsAnswer",
    "Window",
    "current_thread_answer",
    "cursor_page",
    "embedding_chunks",
    "needs_next_message",
    "notice_answer",
    "page_answer",
    "parse_observation_groups",
    "parse_range",
    "part_answer",
    "recall_instructions",
    "search_answer",
    "search_top_k",
    "thread_listing_page",
    "thread_page",
    "threads_answer",
    "window_around_cursor",
    "window_from_anchor",
]
