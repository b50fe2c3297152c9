"""Resource scope: the threads of one Observer cycle, split into calls of bounded size (spec §4.9).

Rules this module keeps (as Mastra 1.31's resource-scoped strategy):

* The threads are ordered by their oldest message, then packed in that order into batches of at most
  ``observation.max_tokens_per_batch`` tokens of messages; a batch closes when the next thread would
  take it over the limit.
* A thread is never split: a thread larger than the limit is a batch of its own.
* The batches are observed in parallel (``multi_thread.py``); each gets the same previous observations.
"""

from __future__ import annotations

from processors.model_port import TokenCounter
from processors.observer.calls import count_input
from processors.observer.types import ThreadInput


def by_oldest_message(threads: list[ThreadInput]) -> list[ThreadInput]:
    """Stable: threads with equally old messages (or none) keep their given order."""
    return sorted(threads, key=lambda t: min((m.created_at for m in t.messages), default=0))


def thread_batches(threads: list[ThreadInput], counter: TokenCounter, max_tokens: int) -> list[list[ThreadInput]]:
    batches: list[list[ThreadInput]] = []
    current: list[ThreadInput] = []
    tokens = 0
    for thread in by_oldest_message(threads):
        size = count_input(counter, thread.messages)
        if current and tokens + size > max_tokens:
            batches.append(current)
            current, tokens = [], 0
        current.append(thread)
        tokens += size
    if current:
        batches.append(current)
    return batches
