"""Idle and provider-change early activation: parsing, the ``'auto'`` table, checks (§2.5, §4.7).

Why activate early at all: a provider's prompt cache expires after a while. Once the cache is cold
(the user was idle longer than the TTL, or the agent switched provider) the next call pays for the
whole prompt anyway, so it is the cheapest moment to swap buffered observations in.

Time is passed in as epoch milliseconds; nothing here reads a clock.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from processors.tokens.js_compat import js_round

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS

_UNIT_MS = {
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), MINUTE_MS),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), HOUR_MS),
}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([a-z]+)$", re.IGNORECASE)

# OpenAI models whose prompt cache defaults to in-memory retention (minutes, not hours):
# gpt-4 / gpt-5, optionally .1–.4, then end or a dash (gpt-5-mini, gpt-4.1-nano).
_OPENAI_SHORT_CACHE = re.compile(r"^gpt-[45](\.[1-4])?(-|$)")


def parse_activation_ttl(value: Any, path: str) -> int | Literal["auto"] | None:
    """Read an ``activate_after_idle`` setting: ms number, duration string, ``'auto'`` or off.

    ``path`` names the option in the error (``activate_after_idle``, ``observation.…``,
    ``reflection.…``) because the same setting may appear in three places.
    """
    if value is None or value is False:
        return None
    if value == "auto":
        return "auto"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if math.isfinite(value) and value >= 0:
            return js_round(value)
    elif isinstance(value, str):
        match = _DURATION.match(value.strip())
        if match and match.group(2).lower() in _UNIT_MS:
            return js_round(float(match.group(1)) * _UNIT_MS[match.group(2).lower()])
    raise ValueError(
        f"{path} must be a non-negative number of milliseconds or a duration string like "
        f'"5m" or "1hr", or "auto", or false; got {value!r}'
    )


def _split_model(model: str) -> tuple[str | None, str]:
    """``'provider/model-id'`` → (provider, model id); a bare model id has no provider."""
    provider, slash, model_id = model.partition("/")
    return (provider, model_id) if slash else (None, model)


def resolve_auto_ttl(actor_model: str | None, provider_options: dict[str, Any] | None) -> int:
    """The ``'auto'`` TTL in ms: roughly how long the actor provider keeps a prompt cache warm.

    Unknown providers (and no model at all) get the shortest common TTL, 5 minutes, so that an
    early activation never happens while a cache may still be warm for longer.
    """
    if not actor_model:
        return 5 * MINUTE_MS
    provider, model_id = _split_model(actor_model.lower())
    provider = provider or ""
    if "openai" in provider:
        openai_options = (provider_options or {}).get("openai") or {}
        retention = openai_options.get(
            "promptCacheRetention", openai_options.get("prompt_cache_retention")
        )
        if retention == "24h":
            return HOUR_MS
        if retention == "in_memory" or _OPENAI_SHORT_CACHE.match(model_id):
            return 5 * MINUTE_MS
        return HOUR_MS
    if "google" in provider or "gemini" in provider:
        return 24 * HOUR_MS
    if "deepseek" in provider:
        return HOUR_MS
    if "groq" in provider:
        return 2 * HOUR_MS
    return 5 * MINUTE_MS


def resolve_ttl(
    setting: int | Literal["auto"] | None,
    actor_model: str | None,
    provider_options: dict[str, Any] | None,
) -> int | None:
    """The TTL in ms that applies to this step, or None when idle activation is off."""
    if setting == "auto":
        return resolve_auto_ttl(actor_model, provider_options)
    return setting


def did_provider_change(actor: str | None, last: str | None) -> bool:
    """Whether the step's model differs from the one that produced the last assistant turn.

    Provider variants of one vendor (``openai.responses`` vs ``openai``) count as the same provider,
    and a bare model id compares model ids only: neither means the cache went cold.
    """
    if not actor or not last:
        return False
    actor_provider, actor_id = _split_model(actor)
    last_provider, last_id = _split_model(last)
    if actor_id != last_id:
        return True
    if actor_provider is None or last_provider is None:
        return False
    return actor_provider.split(".", 1)[0] != last_provider.split(".", 1)[0]


def ttl_expired(ttl_ms: int | None, last_activity_at: int | None, now: int) -> bool:
    """Whether the thread has been idle for at least ``ttl_ms`` (all values epoch/duration ms).

    No TTL or no known last activity means "not expired": early activation is an optimisation and
    must never fire on missing data.
    """
    if ttl_ms is None or last_activity_at is None:
        return False
    return now - last_activity_at >= ttl_ms
