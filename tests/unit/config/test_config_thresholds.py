"""Spec §2.1 per-record overrides (updateRecordConfig) and their "ignored" rules."""

from __future__ import annotations

from processors.config.model import (
    OMConfig,
    dynamic_threshold,
    effective_message_tokens,
    effective_reflection_tokens,
)

DEFAULT = OMConfig().resolved


def test_no_override_uses_instance_values() -> None:
    assert effective_message_tokens(DEFAULT, None) == (30_000, 30_000)
    assert effective_message_tokens(DEFAULT, {}) == (30_000, 30_000)
    assert effective_reflection_tokens(DEFAULT, None) == 40_000


def test_message_tokens_override_in_either_spelling() -> None:
    assert effective_message_tokens(DEFAULT, {"observation": {"message_tokens": 20_000}}) == (
        20_000,
        20_000,
    )
    assert effective_message_tokens(DEFAULT, {"observation": {"messageTokens": 20_000}}) == (
        20_000,
        20_000,
    )


def test_message_tokens_override_at_or_below_buffer_tokens_is_ignored() -> None:
    assert effective_message_tokens(DEFAULT, {"observation": {"messageTokens": 6000}}) == (
        30_000,
        30_000,
    )
    assert effective_message_tokens(DEFAULT, {"observation": {"messageTokens": 6001}}) == (
        6001,
        6001,
    )


def test_message_tokens_override_at_or_below_absolute_retention_floor_is_ignored() -> None:
    resolved = OMConfig(observation={"buffer_activation": 8000, "buffer_tokens": 2000}).resolved
    assert effective_message_tokens(resolved, {"observation": {"messageTokens": 8000}}) == (
        30_000,
        30_000,
    )
    assert effective_message_tokens(resolved, {"observation": {"messageTokens": 8001}}) == (
        8001,
        8001,
    )


def test_ratio_retention_floor_does_not_cause_an_override_to_be_ignored() -> None:
    resolved = OMConfig(observation={"buffer_activation": 0.5}).resolved
    assert resolved.retention_floor == 15_000
    assert effective_message_tokens(resolved, {"observation": {"messageTokens": 10_000}}) == (
        10_000,
        10_000,
    )


def test_override_keeps_a_shared_budget_shared() -> None:
    resolved = OMConfig(share_token_budget=True, observation={"buffer_tokens": False}).resolved
    wanted = effective_message_tokens(resolved, {"observation": {"messageTokens": 10_000}})
    assert wanted == (10_000, 50_000)
    assert dynamic_threshold(wanted, 5000) == 45_000
    assert effective_message_tokens(
        resolved, {"observation": {"messageTokens": {"min": 5000, "max": 9000}}}
    ) == (5000, 9000)


def test_malformed_overrides_are_ignored() -> None:
    for bad in (0, -1, "lots", True, float("nan"), {"min": 10}, {"min": 9, "max": 5}):
        assert effective_message_tokens(DEFAULT, {"observation": {"messageTokens": bad}}) == (
            30_000,
            30_000,
        )
        assert (
            effective_reflection_tokens(DEFAULT, {"reflection": {"observationTokens": bad}})
            == 40_000
        )
    assert effective_message_tokens(DEFAULT, {"observation": "nonsense"}) == (30_000, 30_000)


def test_reflection_override_in_either_spelling() -> None:
    assert (
        effective_reflection_tokens(DEFAULT, {"reflection": {"observationTokens": 20_000}})
        == 20_000
    )
    assert (
        effective_reflection_tokens(DEFAULT, {"reflection": {"observation_tokens": 20_000}})
        == 20_000
    )
