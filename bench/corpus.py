"""The conversations the benchmarks feed: ~200-token chat messages, alternating user/assistant.

One generator for every benchmark, so their figures are about the same input. ``salt`` makes the
texts unique per run: the token counter caches estimates by text hash, and a benchmark that re-used
texts would time cache hits instead of counting.
"""

from __future__ import annotations

from collections.abc import Iterator

from schemas.messages import ChatMessage, TextPart

T0 = 1_733_000_000_000  # 2024-11-30T20:53:20Z
WORDS = ("plan trip lisbon budget flight hotel museum dinner train weekend friend project deadline "
         "review tests deploy bug fix cache kafka memory notes").split()


def text(i: int, thread: int, salt: str) -> str:
    """≈ 150–250 tokens, 200 on average (tokenx counts ≈ 1.14 tokens per word of this vocabulary)."""
    n = 120 + (i * 37 + thread * 11) % 90
    body = " ".join(WORDS[(i + j * 7 + thread) % len(WORDS)] for j in range(n))
    return f"{salt} turn {i} of thread {thread}: {body}"


def messages(threads: int, per_thread: int, *, gap_ms: int = 60_000, salt: str = "s",
             prefix: str = "t") -> Iterator[ChatMessage]:
    """Threads interleaved turn by turn, ``gap_ms`` of event time between a thread's turns."""
    for i in range(per_thread):
        for t in range(threads):
            yield ChatMessage(id=f"{prefix}{t}-m{i}", thread_id=f"{prefix}{t}", resource_id=f"r-{prefix}{t}",
                              role="user" if i % 2 == 0 else "assistant", created_at=T0 + i * gap_ms + t,
                              parts=[TextPart(text=text(i, t, salt))])
