"""Spec §2.5 and §4.7: activate_after_idle parsing (scenario 9), the 'auto' table, TTL expiry
(scenario 25) and provider-change detection (scenario 26)."""

from __future__ import annotations

import pytest

from processors.config.ttl import (
    HOUR_MS,
    MINUTE_MS,
    did_provider_change,
    parse_activation_ttl,
    resolve_auto_ttl,
    resolve_ttl,
    ttl_expired,
)


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ("90s", 90_000),
        ("1.5h", 5_400_000),
        ("5 minutes", 300_000),
        ("250ms", 250),
        ("2 HRS", 7_200_000),
        ("1hr", 3_600_000),
        (300_000, 300_000),
        (0, 0),
        ("auto", "auto"),
        (None, None),
        (False, None),
    ],
)
def test_s09_activate_after_idle_parsing(value: object, ms: object) -> None:
    assert parse_activation_ttl(value, "activate_after_idle") == ms


@pytest.mark.parametrize(
    "value", ["soon", -1, float("nan"), float("inf"), "5", "5 days", True, "-5m"]
)
def test_s09_activate_after_idle_rejects_with_path(value: object) -> None:
    with pytest.raises(
        ValueError, match=r"^reflection\.activate_after_idle must be a non-negative"
    ):
        parse_activation_ttl(value, "reflection.activate_after_idle")


@pytest.mark.parametrize(
    ("model", "options", "ttl"),
    [
        ("openai/gpt-4o", {"openai": {"promptCacheRetention": "24h"}}, HOUR_MS),
        ("openai/gpt-5.5", {"openai": {"promptCacheRetention": "in_memory"}}, 5 * MINUTE_MS),
        ("openai/gpt-5", None, 5 * MINUTE_MS),
        ("openai/gpt-5-mini", None, 5 * MINUTE_MS),
        ("openai/gpt-4.1", None, 5 * MINUTE_MS),
        ("openai.responses/gpt-5.1-codex", None, 5 * MINUTE_MS),
        ("openai/GPT-4", None, 5 * MINUTE_MS),
        ("openai/gpt-5.5", None, HOUR_MS),
        ("openai/gpt-6", None, HOUR_MS),
        ("openai/gpt-4o", None, HOUR_MS),
        ("google/gemini-2.5-flash", None, 24 * HOUR_MS),
        ("vertex-gemini/gemini-2.5-pro", None, 24 * HOUR_MS),
        ("deepseek/deepseek-chat", None, HOUR_MS),
        ("groq/llama-3.3-70b", None, 2 * HOUR_MS),
        ("xai/grok-4", None, 5 * MINUTE_MS),
        ("anthropic/claude-sonnet-4", None, 5 * MINUTE_MS),
        ("openrouter/openai/gpt-5.5", None, 5 * MINUTE_MS),
        ("gpt-5.5", None, 5 * MINUTE_MS),
        (None, None, 5 * MINUTE_MS),
    ],
)
def test_auto_ttl_table(model: str | None, options: dict | None, ttl: int) -> None:
    assert resolve_auto_ttl(model, options) == ttl


def test_resolve_ttl_resolves_auto_per_actor_and_passes_numbers_through() -> None:
    assert resolve_ttl("auto", "groq/llama", None) == 2 * HOUR_MS
    assert resolve_ttl(90_000, "groq/llama", None) == 90_000
    assert resolve_ttl(None, "groq/llama", None) is None


def test_s25_ttl_expiry_boundary() -> None:
    last_activity = 1_700_000_000_000
    assert ttl_expired(300_000, last_activity, last_activity + 301_000)
    assert not ttl_expired(300_000, last_activity, last_activity + 299_000)
    assert ttl_expired(300_000, last_activity, last_activity + 300_000)


def test_s25_no_ttl_or_no_activity_never_expires() -> None:
    assert not ttl_expired(None, 0, 10**12)
    assert not ttl_expired(300_000, None, 10**12)


@pytest.mark.parametrize(
    ("last", "actor", "changed"),
    [
        ("openai/gpt-4o", "anthropic/claude-x", True),
        ("openai.responses/gpt-5", "openai/gpt-5", False),
        ("gpt-5", "anthropic/gpt-5", False),
        ("openai/gpt-5", "openai/gpt-5-mini", True),
        ("openai/gpt-5", "azure/gpt-5", True),
        (None, "openai/gpt-5", False),
        ("openai/gpt-5", None, False),
    ],
)
def test_s26_provider_change(last: str | None, actor: str | None, changed: bool) -> None:
    assert did_provider_change(actor, last) is changed
