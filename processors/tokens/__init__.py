"""Token counting for thresholds: Mastra's estimator by default, real BPE encodings on request.

Every threshold decision (observe at 30k, reflect at 40k, buffer intervals) compares these counts
with config values, so the choice of counter is part of the config: ``"tokenx"`` reproduces
Mastra's numbers exactly (what its defaults were tuned for); ``"o200k_base"`` / ``"cl100k_base"``
count strings with OpenAI's tokenizers, loaded from local files. All three apply the same message
accounting (per-message 3.8, per-conversation 24, attachment heuristics; see :mod:`.counter`).

Counters are pure (no IO after the one-time local file read of a BPE encoding), never modify the
messages they count, and are safe to share between threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Protocol

from processors.text.line_memo import LineMemo
from processors.tokens.attachments import ModelContext
from processors.tokens.bpe_offline import BPE_ENCODINGS, TokenizerFilesMissing, load_encoding
from processors.tokens.counter import TOKENS_PER_CONVERSATION, TOKENS_PER_MESSAGE, MessageTokenCounter
from processors.tokens.estimate_cache import EstimateCache
from processors.tokens.tokenx import estimate_token_count
from schemas.messages import ChatMessage

COUNTER_NAMES: frozenset[str] = frozenset({"tokenx"}) | BPE_ENCODINGS

__all__ = [
    "COUNTER_NAMES",
    "TOKENS_PER_CONVERSATION",
    "TOKENS_PER_MESSAGE",
    "ModelContext",
    "TokenCounter",
    "TokenizerFilesMissing",
    "estimate_token_count",
    "get_counter",
]


class TokenCounter(Protocol):
    name: str

    def count_string(self, text: str) -> int: ...

    def count_observations(self, text: str) -> int:
        """Same as :meth:`count_string`; named for the call sites that measure observation logs."""
        ...

    def count_paragraphs(self, paragraphs: Sequence[str]) -> int:
        """``count_observations("\\n\\n".join(paragraphs))``."""
        ...

    def count_observation_lines(self, text: str) -> int:
        """:meth:`count_observations`, through the remembered counts of the text's lines."""
        ...

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """Each line's :meth:`count_string` (remembered by line)."""
        ...

    def count_joined(self, lines: Sequence[str]) -> int:
        """``count_string("\\n".join(lines))``."""
        ...

    def count_message(self, msg: ChatMessage) -> int:
        """Payload plus the per-message overhead, rounded as Mastra rounds."""
        ...

    def count_messages(self, msgs: Sequence[ChatMessage]) -> int:
        """``24 + Σ count_message``; 0 for no messages."""
        ...


def get_counter(name: str = "tokenx", model_context: str | None = None) -> TokenCounter:
    """The shared counter for this encoding and actor model (``"provider/modelId"``).

    ``model_context`` selects the image rules (openai / google / anthropic / other). Raises
    ``ValueError`` for an unknown name and :class:`TokenizerFilesMissing` when a BPE encoding's
    rank file cannot be found on disk.
    """
    if name not in COUNTER_NAMES:
        raise ValueError(f"unknown token counter {name!r}; expected one of {sorted(COUNTER_NAMES)}")
    return _shared_counter(name, model_context or None)


@lru_cache(maxsize=64)
def _shared_counter(name: str, model_context: str | None) -> MessageTokenCounter:
    return MessageTokenCounter(name, _string_counter(name), ModelContext.parse(model_context), _shared_cache(name),
                               splits_on_whitespace=name == "tokenx",  # tokenx prices runs between spaces
                               line_counts=_shared_line_counts(name))


@lru_cache(maxsize=None)
def _string_counter(name: str) -> Callable[[str], int]:
    if name == "tokenx":
        return estimate_token_count
    encode = load_encoding(name).encode_ordinary

    def count(text: str) -> int:
        return len(encode(text))

    return count


@lru_cache(maxsize=None)
def _shared_cache(name: str) -> EstimateCache:
    """One LRU per string counter: text estimates do not depend on the actor model."""
    return EstimateCache()


@lru_cache(maxsize=None)
def _shared_line_counts(name: str) -> LineMemo[int]:
    """One line memo per string counter too (whatever the actor model), so it is bounded once."""
    count = _string_counter(name)
    return LineMemo(lambda lines: [count(line) if line else 0 for line in lines])
