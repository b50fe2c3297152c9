"""Spec §2.8: every configuration error a config can trigger, one case each, raised at construction.

Extractor and ModelByInputTokens construction errors are in test_extractor_spec.py and
test_model_tiers.py. Errors about Mastra internals (core feature flags, vector store objects,
subconscious, the runtime thread id) have no counterpart in a config and are not tested here.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from processors.config.model import OMConfig

ERRORS: list[tuple[str, dict[str, Any], str]] = [
    (
        "s02_model_and_observation_model",
        {"model": "a/b", "observation": {"model": "c/d"}},
        r"cannot set both model and observation\.model",
    ),
    (
        "s02_model_and_reflection_model",
        {"model": "a/b", "reflection": {"model": "c/d"}},
        r"cannot set both model and reflection\.model",
    ),
    (
        "share_token_budget_with_default_buffering",
        {"shareTokenBudget": True},
        r"async buffering is on by default: set observation\.buffer_tokens: false",
    ),
    (
        "share_token_budget_with_configured_buffering",
        {"shareTokenBudget": True, "observation": {"bufferActivation": 0.7}},
        r"remove observation\.buffer_tokens, observation\.buffer_activation and "
        r"observation\.block_after",
    ),
    (
        "bad_activate_after_idle",
        {"activateAfterIdle": "soon"},
        r"Value error, activate_after_idle must be a non-negative number",
    ),
    (
        "bad_observation_activate_after_idle",
        {"observation": {"activateAfterIdle": -1}},
        r"observation\.activate_after_idle must be a non-negative number",
    ),
    (
        "bad_reflection_activate_after_idle",
        {"reflection": {"activateAfterIdle": "5 parsecs"}},
        r"reflection\.activate_after_idle must be a non-negative number",
    ),
    (
        "buffering_with_resource_scope",
        {"scope": "resource", "reflection": {"bufferActivation": 0.5}},
        r"async buffering is not yet supported with scope: 'resource'",
    ),
    (
        "buffer_tokens_not_positive",
        {"observation": {"bufferTokens": 0}},
        r"observation\.buffer_tokens must be > 0",
    ),
    (
        "buffer_tokens_not_below_message_tokens",
        {"observation": {"bufferTokens": 40_000}},
        r"observation\.buffer_tokens \(40000 tokens\) must be less than "
        r"observation\.message_tokens \(30000\)",
    ),
    (
        "buffer_activation_not_positive",
        {"observation": {"bufferActivation": 0}},
        r"observation\.buffer_activation must be > 0",
    ),
    (
        "buffer_activation_between_ratio_and_absolute",
        {"observation": {"bufferActivation": 1.5}},
        r"observation\.buffer_activation must be <= 1 \(a ratio\) or >= 1000",
    ),
    (
        "absolute_buffer_activation_not_below_message_tokens",
        {"observation": {"bufferActivation": 30_000}},
        r"observation\.buffer_activation \(30000 tokens\) must be less than "
        r"observation\.message_tokens",
    ),
    (
        "block_after_below_message_tokens",
        {"observation": {"blockAfter": 0.9}},
        r"observation\.block_after \(0\.9 → 27000 tokens\) must be >= observation\.message_tokens",
    ),
    (
        "block_after_without_buffer_tokens",
        {"observation": {"bufferTokens": False, "blockAfter": 1.5}},
        r"observation\.block_after requires async buffering",
    ),
    (
        "previous_observer_tokens_negative",
        {"observation": {"previousObserverTokens": -1}},
        r"observation\.previous_observer_tokens must be false or a finite number >= 0",
    ),
    (
        "previous_observer_tokens_infinite",
        {"observation": {"previousObserverTokens": float("inf")}},
        r"observation\.previous_observer_tokens must be false or a finite number >= 0",
    ),
    (
        "reflection_buffer_activation_outside_unit_interval",
        {"reflection": {"bufferActivation": 1.5}},
        r"reflection\.buffer_activation must be in \(0, 1\]",
    ),
    (
        "reflection_block_after_below_observation_tokens",
        {"reflection": {"blockAfter": 0.9}},
        r"reflection\.block_after \(0\.9 → 36000 tokens\) must be >= "
        r"reflection\.observation_tokens",
    ),
    (
        "reflection_block_after_without_reflection_buffering",
        {"observation": {"bufferTokens": False}, "reflection": {"blockAfter": 1.5}},
        r"reflection\.block_after requires async reflection",
    ),
    (
        "retrieval_vector_without_embedder",
        {"retrieval": {"vector": True}},
        r"retrieval\.vector: true requires retrieval\.embedder",
    ),
]


@pytest.mark.parametrize(
    ("config", "message"), [case[1:] for case in ERRORS], ids=[case[0] for case in ERRORS]
)
def test_configuration_error_is_raised_at_construction(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        OMConfig.from_mastra(config)


def test_each_error_case_is_valid_once_its_culprit_is_removed() -> None:
    """Guards the table: the baseline configs the cases start from are themselves valid."""
    assert OMConfig.from_mastra({"model": "a/b"}).observer_model() == "a/b"
    assert OMConfig.from_mastra({"shareTokenBudget": True, "observation": {"bufferTokens": False}})
    assert OMConfig.from_mastra(
        {"retrieval": {"vector": True, "embedder": "openai/text-embedding-3-small"}}
    )
    assert OMConfig.from_mastra({"scope": "resource", "observation": {"bufferTokens": False}})
