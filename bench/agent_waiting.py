"""Agent waiting with a slow model: how often a user turn finds the context still over the threshold.

In Mastra a user message that finds pending tokens ≥ the message threshold must wait for an
Observer call before the agent can answer; buffering exists to make that rare. Measured on one
long conversation (default thresholds) with the model answering ``latency_ms`` after each job, for
several gaps between messages; the baseline is the same conversation with buffering disabled.
Also counted: synchronous observations (``observation-start``), each an Observer call on the path.
"""

from __future__ import annotations

from typing import Any

from bench.corpus import messages
from bench.simulated import NO_BUFFERING, run
from schemas.messages import ChatMessage


def waits(options: dict[str, Any], batch: list[ChatMessage], latency_ms: int) -> tuple[float, int]:
    """(share of user turns over the threshold, synchronous observations)."""
    users = {f"message:{m.id}" for m in batch if m.role == "user"}
    result = run(options, batch, latency_ms)
    turns = [e for e in result.entries if e.input in users]
    over = sum(1 for e in turns if e.pending_tokens >= e.message_threshold)
    sync = sum(1 for e in result.entries for ev in e.events if ev["type"] == "observation-start")
    return over / len(turns), sync


def main(per_thread: int, latency_ms: int, gaps_s: list[float]) -> None:
    print(f"{per_thread:,} messages of ~200 tokens in one thread, default thresholds, "
          f"model latency {latency_ms / 1000:g} s (event time)")
    print(f"{'gap':>6}  {'buffering off (baseline)':>26}  {'default (buffering on)':>26}  ratio")
    for gap in gaps_s:
        batch = list(messages(1, per_thread, gap_ms=int(gap * 1000), salt=f"waiting{gap}"))
        base_share, base_sync = waits(NO_BUFFERING, batch, latency_ms)
        share, sync = waits({}, batch, latency_ms)
        ratio = f"{share / base_share:.3f}" if base_share else "n/a"
        print(f"{gap:>5g}s  {base_share:>10.2%} of turns, {base_sync:>3} sync  "
              f"{share:>10.2%} of turns, {sync:>3} sync  {ratio}")
