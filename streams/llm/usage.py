"""The tokens a provider billed, read from a litellm response: input, output, cached and cache-written input.

litellm normalises every provider's usage to OpenAI's shape: ``prompt_tokens`` counts the whole
prompt, cached tokens included, and ``prompt_tokens_details.cached_tokens`` is the part read from
the provider's prompt cache (OpenAI's own field; Gemini's ``cachedContentTokenCount`` and
DeepSeek's ``prompt_cache_hit_tokens`` land there too). Anthropic's ``cache_read_input_tokens``
is kept beside it on the same object, and read when the details are missing; its
``cache_creation_input_tokens`` (prompt tokens written to the cache, billed 1.25× input) become
``cache_write_input_tokens``.

A usage in Anthropic's own shape (``input_tokens``, no ``prompt_tokens``) counts the cache reads
and writes *outside* ``input_tokens``; they are added back, so ``input_tokens`` here always means
every prompt token, and the cached and cache-written tokens together never exceed it. Missing or
odd values read as 0.
"""

from __future__ import annotations

from typing import Any

from schemas.jobs import Usage


def usage_of(response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage()
    cached = _count(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)) \
        or _count(getattr(usage, "cache_read_input_tokens", None))
    written = _count(getattr(usage, "cache_creation_input_tokens", None))
    if getattr(usage, "prompt_tokens", None) is not None:
        prompt = _count(usage.prompt_tokens)
        output = _count(getattr(usage, "completion_tokens", None))
    else:  # Anthropic's own shape: cache reads and writes are not in input_tokens
        prompt = _count(getattr(usage, "input_tokens", None)) + cached + written
        output = _count(getattr(usage, "output_tokens", None))
    cached = min(cached, prompt)
    return Usage(input_tokens=prompt, output_tokens=output, cached_input_tokens=cached,
                 cache_write_input_tokens=min(written, prompt - cached))


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return max(int(value), 0)
