"""Call the model and parse, regenerating once when the answer is unusable (spec §5.7).

Unusable: degenerate (a loop, §5.7), or — our rule, not Mastra's — an answer with no notes at all (no
``<observations>`` block and no list item: prose, a refusal, an apology). Mastra 1.31 applies such an
answer as an empty observation, so its messages leave the context and nothing stands for them; here
the model is asked once more and then the cycle fails, so the messages stay unobserved and are
observed again later. An explicit empty ``<observations>`` block stays a valid "nothing to note"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, TypeVar

from processors.model_port import ModelCall, ModelCallError, ModelClient, TokenCounter, Usage

P = TypeVar("P")
DEGENERATE_TRIES = 2


@dataclass
class Asked(Generic[P]):
    parsed: P | None = None
    answer: str = ""
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    degenerate: bool = False
    error: str | None = None


DEGENERATE = "degenerate observer output: the model repeated itself"


async def ask(
    llm: ModelClient, call: ModelCall, parse: Callable[[str], P], unusable: Callable[[P], str | None]
) -> Asked[P]:
    """``unusable(parsed)``: why an answer cannot be applied, or None. ``error`` is set when the call
    failed for good or every try was unusable; ``degenerate`` when the last try looped."""
    result: Asked[P] = Asked()
    for _ in range(DEGENERATE_TRIES):
        try:
            reply = await llm.complete(call)
        except ModelCallError as exc:
            result.usage += exc.usage
            result.attempts += exc.attempts
            result.error = str(exc)
            return result
        result.usage += reply.usage
        result.attempts += reply.attempts
        parsed = parse(reply.text)
        result.parsed, result.answer = parsed, reply.text
        reason = unusable(parsed)
        result.degenerate = reason == DEGENERATE
        if reason is None:
            return result
    result.error = f"{reason} on every try"
    return result


def count_input(counter: TokenCounter, messages: list) -> int:
    """Tokens of the messages to observe (what ``ModelByInputTokens`` tiers are keyed on)."""
    count_messages = getattr(counter, "count_messages", None)
    if callable(count_messages):
        return int(count_messages(messages))
    return sum(counter.count_string(str(m.model_dump(mode="json"))) for m in messages)
