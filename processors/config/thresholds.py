"""The thresholds in force for one record: shared budget and per-record overrides (§2.1, §2.4).

A record may carry overrides (Mastra's ``updateRecordConfig``); only
``observation.message_tokens`` and ``reflection.observation_tokens`` are read, in either spelling.
Overrides come from the record's event history, so a malformed one is ignored (the instance value
applies) rather than raised: a fold over the log must never fail on old data.
"""

from __future__ import annotations

import math
from typing import Any

from processors.tokens.js_compat import js_round
from processors.config.resolve import ResolvedConfig

TokenRange = tuple[int, int]


def dynamic_threshold(budget: ResolvedConfig | TokenRange, observation_tokens: int) -> int:
    """The observation threshold now: under a shared budget, room the observations leave unused.

    ``budget`` is a resolved config or an explicit ``(min, max)`` range (e.g. from
    :func:`effective_message_tokens`). A fixed threshold (``min == max``) is returned unchanged;
    a range yields ``max(max − observation_tokens, min)``.
    """
    low, high = (
        (budget.message_tokens_min, budget.message_tokens_max)
        if isinstance(budget, ResolvedConfig)
        else budget
    )
    if low == high:
        return high
    return js_round(max(high - observation_tokens, low))


def _override_value(override: dict[str, Any] | None, section: str, *names: str) -> Any:
    if not override:
        return None
    part = override.get(section)
    if not isinstance(part, dict):
        return None
    return next((part[name] for name in names if part.get(name) is not None), None)


def _as_tokens(value: Any) -> int | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return js_round(value) if ok and value > 0 else None


def _override_range(value: Any, resolved: ResolvedConfig) -> TokenRange | None:
    """A number keeps the instance's mode (a shared budget stays shared); ``{min, max}`` is kept."""
    if isinstance(value, dict):
        low, high = _as_tokens(value.get("min")), _as_tokens(value.get("max"))
        return (low, high) if low is not None and high is not None and low <= high else None
    tokens = _as_tokens(value)
    if tokens is None:
        return None
    shared = resolved.message_tokens_max != resolved.message_tokens_min
    return (tokens, tokens + resolved.reflection_tokens) if shared else (tokens, tokens)


def effective_message_tokens(
    resolved: ResolvedConfig, override: dict[str, Any] | None
) -> TokenRange:
    """The ``(min, max)`` observation threshold for a record, honouring its override.

    The override is ignored when it would leave no room for buffering: its max at or below
    ``buffer_tokens``, or at or below an absolute retention floor.
    """
    instance = (resolved.message_tokens_min, resolved.message_tokens_max)
    value = _override_value(override, "observation", "message_tokens", "messageTokens")
    wanted = _override_range(value, resolved) if value is not None else None
    if wanted is None:
        return instance
    if resolved.buffer_tokens is not None and wanted[1] <= resolved.buffer_tokens:
        return instance
    floor = resolved.retention_floor
    if resolved.retention_floor_is_absolute and floor is not None and wanted[1] <= floor:
        return instance
    return wanted


def effective_reflection_tokens(resolved: ResolvedConfig, override: dict[str, Any] | None) -> int:
    """The reflection threshold for a record, honouring its override."""
    value = _override_value(override, "reflection", "observation_tokens", "observationTokens")
    tokens = _as_tokens(value)
    return resolved.reflection_tokens if tokens is None else tokens
