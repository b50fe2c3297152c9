"""Percentiles for latency samples (nearest rank: a reported p99 is a latency that happened)."""

from __future__ import annotations

import math


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summary(samples: list[float]) -> str:
    return "  ".join(f"p{q} {percentile(samples, q):8.1f} ms" for q in (50, 95, 99))
