"""Pick the Observer/Reflector model by the size of its input (spec §2.6).

A small input goes to a cheap model and a large one to a model with a long context window. The
tiers are checked at construction so that a bad map fails when the config is loaded, not in the
middle of an observation cycle; an input above the top tier is a runtime error
(:class:`TierOverflowError`) that the caller turns into a failed cycle.
"""

from __future__ import annotations

from pydantic import field_validator

from processors.config.base import ConfigModel


class TierOverflowError(ValueError):
    """The input is larger than the largest configured tier."""

    def __init__(self, input_tokens: int, largest: int) -> None:
        super().__init__(
            f"input token count ({input_tokens}) exceeds the largest configured threshold "
            f"({largest})"
        )
        self.input_tokens = input_tokens
        self.largest = largest


class ModelByInputTokens(ConfigModel):
    """``{limit: model}`` tiers; an input of ``n`` tokens uses the first tier with ``n ≤ limit``.

    Accepts Mastra's ``{"upTo": {...}}`` shape as well as ``up_to``; JSON object keys (strings) are
    read as integers. Tiers are kept sorted ascending.
    """

    up_to: dict[int, str]

    @field_validator("up_to")
    @classmethod
    def _check_tiers(cls, tiers: dict[int, str]) -> dict[int, str]:
        if not tiers:
            raise ValueError("ModelByInputTokens needs at least one tier in up_to")
        for limit, model in tiers.items():
            if limit <= 0:
                raise ValueError(f"up_to key {limit} must be a positive number of input tokens")
            if not model.strip():
                raise ValueError(f"up_to[{limit}] must name a model, e.g. 'openai/gpt-4o-mini'")
        return dict(sorted(tiers.items()))

    def resolve(self, input_tokens: int) -> str:
        """The model for an input of ``input_tokens`` tokens."""
        for limit, model in self.up_to.items():
            if input_tokens <= limit:
                return model
        raise TierOverflowError(input_tokens, max(self.up_to))

    def models(self) -> list[str]:
        """Every model that may be picked, smallest tier first."""
        return list(self.up_to.values())
