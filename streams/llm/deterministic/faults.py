"""Make the deterministic model slow or failing on demand, for benchmarks and fault tests.

Options ride on the model name as a query string, or in an ``om_deterministic`` dict passed
through litellm: ``om-deterministic/observer?latency_ms=200&fail=429&times=2``.

* ``latency_ms`` — wait this long before answering (every call).
* ``fail`` — ``429``, ``500``, ``503``, ``timeout``, ``400`` (raise that error), ``degenerate``
  (answer with a looping text), ``empty`` (answer with an empty ``<observations>`` block) or
  ``malformed`` (an answer cut off mid-line: an unclosed block, a stray closing tag, a broken section).
* ``times`` — only the first N calls under this exact model name misbehave (default: all).
* ``slow_match`` — only calls whose prompt contains this text wait ``latency_ms`` (default: all):
  one thread's call hangs while the others answer, so jobs finish out of order.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

FAIL_KINDS = frozenset({"429", "500", "503", "timeout", "400", "degenerate", "empty", "malformed"})


@dataclass(frozen=True)
class FaultPlan:
    role: str
    latency_ms: float = 0.0
    fail: str | None = None
    times: int | None = None
    slow_match: str | None = None

    def wait_s(self, prompt_texts: list[str]) -> float:
        """How long a call with this prompt waits before answering."""
        if not self.latency_ms or (self.slow_match is not None and not any(self.slow_match in t for t in prompt_texts)):
            return 0.0
        return self.latency_ms / 1000


def parse_model(model: str, extra: dict[str, Any] | None = None) -> FaultPlan:
    role, _, query = model.partition("?")
    options: dict[str, Any] = dict(parse_qsl(query))
    options.update(extra or {})
    fail = str(options["fail"]) if options.get("fail") not in (None, "") else None
    if fail is not None and fail not in FAIL_KINDS:
        raise ValueError(f"unknown fail kind {fail!r}; expected one of {sorted(FAIL_KINDS)}")
    times = int(options["times"]) if options.get("times") not in (None, "") else None
    return FaultPlan(role=role, latency_ms=float(options.get("latency_ms", 0) or 0), fail=fail, times=times,
                     slow_match=options.get("slow_match") or None)


class FaultCounter:
    """Counts calls per model name so ``times=N`` can stop misbehaving after N calls."""

    def __init__(self) -> None:
        self._calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def should_fail(self, key: str, plan: FaultPlan) -> bool:
        if plan.fail is None:
            return False
        with self._lock:
            seen = self._calls.get(key, 0)
            self._calls[key] = seen + 1
        return plan.times is None or seen < plan.times

    def reset(self) -> None:
        with self._lock:
            self._calls.clear()


DEGENERATE_TEXT = "<observations>\n" + "* 🟡 (10:00) The same thing happened again and again and again.\n" * 300 + "</observations>"
EMPTY_TEXT = "<observations>\n</observations>"
MALFORMED_TEXT = ("</current-task>\n<observations>\n* 🔴 (10:00) User asked about the trip budget\n"
                  "* 🟡 (10:01) Assistant suggested <suggested-response>Ask about th")
