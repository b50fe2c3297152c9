"""What a model call cost: litellm's cost map, read offline (the copy the litellm package ships).

``LITELLM_LOCAL_MODEL_COST_MAP`` is set before litellm is imported, so pricing never reaches the
network. A model the map does not know (the offline ``om-deterministic`` model, a self-hosted one)
has no cost: None, shown as "—", never a guessed zero. The offline model is answered without
importing litellm: the processor's sink prices every result, and that import (seconds of CPU, on the
sink's thread) would be paid by a worker that never calls a priced model. Cached input tokens (part of the input
tokens) are priced at the map's cache-read price where it has one, else as plain input; cache
writes (Anthropic's, also part of the input tokens) at its cache-creation price, 1.25× input.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # read when litellm is imported

from streams.llm.models import OFFLINE_PROVIDER, to_litellm_model


def call_cost(model: str | None, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
              cache_write_input_tokens: int = 0) -> float | None:
    """USD for one call's tokens at the map's per-token prices, or None for an unpriced model.

    ``input_tokens`` includes the cached and the cache-written tokens, as litellm reports them."""
    if not model or model.split("/", 1)[0] == OFFLINE_PROVIDER:
        return None
    import litellm

    litellm.suppress_debug_info = True  # an unpriced model is an answer here, not a banner on stdout
    try:
        prompt, completion = litellm.cost_per_token(model=to_litellm_model(model), prompt_tokens=input_tokens,
                                                    completion_tokens=output_tokens,
                                                    cache_read_input_tokens=cached_input_tokens,
                                                    cache_creation_input_tokens=cache_write_input_tokens)
    except Exception:  # noqa: BLE001 -- litellm raises for a model it has no price for; that is "unknown", not an error
        return None
    return float(prompt) + float(completion)
