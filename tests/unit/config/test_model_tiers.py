"""Spec §2.6 ModelByInputTokens: tier choice, the overflow error and the construction errors."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from processors.config.model_tiers import ModelByInputTokens, TierOverflowError

TIERS = ModelByInputTokens.model_validate(
    {"upTo": {"100000": "google/gemini-2.5-pro", "8000": "openai/gpt-4o-mini"}}
)


@pytest.mark.parametrize(
    ("tokens", "model"),
    [
        (0, "openai/gpt-4o-mini"),
        (8000, "openai/gpt-4o-mini"),
        (8001, "google/gemini-2.5-pro"),
        (100_000, "google/gemini-2.5-pro"),
    ],
)
def test_resolve_picks_first_tier_at_or_above_input(tokens: int, model: str) -> None:
    assert TIERS.resolve(tokens) == model


def test_tiers_are_sorted_ascending() -> None:
    assert list(TIERS.up_to) == [8000, 100_000]


def test_input_above_top_tier_is_an_error() -> None:
    with pytest.raises(
        TierOverflowError,
        match=r"input token count \(100001\) exceeds the largest configured threshold",
    ):
        TIERS.resolve(100_001)


@pytest.mark.parametrize(
    ("tiers", "message"),
    [
        ({}, "at least one tier"),
        ({0: "a/b"}, "must be a positive number"),
        ({-5: "a/b"}, "must be a positive number"),
        ({10: " "}, "must name a model"),
        ({"lots": "a/b"}, "valid integer"),
    ],
)
def test_construction_errors(tiers: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ModelByInputTokens(up_to=tiers)
