"""Pick the concrete model and output budget for one call (spec §2.2, §2.6).

Tier maps are resolved here, in the core, because the Reflector's start level depends on the
resolved model id; a tier overflow surfaces as the cycle's error, not a crash.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MODEL = "google/gemini-2.5-flash"
DEFAULT_MAX_OUTPUT_TOKENS = 100_000


def resolve_model(model: Any, input_tokens: int) -> str:
    """``'default'``/``None`` → the default model; a tier map → its tier; a string → itself."""
    if model is None or model == "default":
        return DEFAULT_MODEL
    if hasattr(model, "resolve"):
        return str(model.resolve(input_tokens))
    return str(model)


def max_output_tokens(model: Any, explicit: int | None) -> int | None:
    """The spec gives 100 000 only to the default model and tier maps; a custom model gets none."""
    if explicit is not None:
        return explicit
    if model is None or model == "default" or model == DEFAULT_MODEL or hasattr(model, "resolve"):
        return DEFAULT_MAX_OUTPUT_TOKENS
    return None
