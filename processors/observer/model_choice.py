"""Pick the concrete model for one call (spec §2.2, §2.6).

Tier maps are resolved here, in the core, because the Reflector's start level depends on the
resolved model id; a tier overflow surfaces as the cycle's error, not a crash. The sampling
settings are not decided here: ``processors/config/roles.py`` decides them once, for the config.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MODEL = "google/gemini-2.5-flash"


def resolve_model(model: Any, input_tokens: int) -> str:
    """``'default'``/``None`` → the default model; a tier map → its tier; a string → itself."""
    if model is None or model == "default":
        return DEFAULT_MODEL
    if hasattr(model, "resolve"):
        return str(model.resolve(input_tokens))
    return str(model)
