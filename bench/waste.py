"""Waste: Observer input tokens spent per 1,000 conversation tokens, and messages observed twice.

Buffering observes ahead in chunks; a chunk that is superseded (a synchronous observation overtook
it, or its result came back stale) spends Observer tokens that buy nothing, and a message sent to
the Observer twice is paid twice. Counted over every observe job issued on a long conversation
with Mastra's default thresholds scaled down 10× (same ratios), model latency in event time. The
baseline is buffering disabled, where each message is observed exactly once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.corpus import messages
from bench.simulated import NO_BUFFERING, run
from processors.config import deep_merge
from processors.tokens import get_counter
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage

SCALED = {"observation": {"messageTokens": 3_000}, "reflection": {"observationTokens": 4_000}}


def spent(options: dict[str, Any], batch: list[ChatMessage], latency_ms: int) -> tuple[int, int, int]:
    """(Observer input tokens, messages in more than one observe job, observe jobs)."""
    jobs = [j for j in run(deep_merge(SCALED, options), batch, latency_ms).jobs if isinstance(j, ObserveJob)]
    seen = Counter(m.id for j in jobs for m in j.messages)
    return sum(j.tokens_to_observe for j in jobs), sum(1 for n in seen.values() if n > 1), len(jobs)


def main(per_thread: int, latency_ms: int, gap_s: float) -> None:
    batch = list(messages(1, per_thread, gap_ms=int(gap_s * 1000), salt="waste"))
    total = sum(get_counter("tokenx").count_message(m) for m in batch)
    base_tokens, base_twice, base_jobs = spent(NO_BUFFERING, batch, latency_ms)
    tokens, twice, jobs = spent({}, batch, latency_ms)
    print(f"{per_thread:,} messages ({total:,} tokens) in one thread, thresholds 3,000 / 4,000 (defaults ÷ 10), "
          f"model latency {latency_ms / 1000:g} s, a message every {gap_s:g} s")
    print(f"baseline: buffering off   {base_tokens * 1000 / total:7.1f} Observer input tokens per 1,000, "
          f"{base_jobs:4} observe jobs, {base_twice} messages observed more than once")
    print(f"default: buffering on     {tokens * 1000 / total:7.1f} Observer input tokens per 1,000, "
          f"{jobs:4} observe jobs, {twice} messages observed more than once")
    print(f"ratio default/baseline    {tokens / base_tokens:7.3f}")
