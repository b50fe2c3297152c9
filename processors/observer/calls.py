"""Call the model and parse, regenerating once when the answer is degenerate (spec §5.7)."""

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


async def ask(
    llm: ModelClient, call: ModelCall, parse: Callable[[str], P], is_degenerate: Callable[[P], bool]
) -> Asked[P]:
    """``error`` set when the call failed for good; ``degenerate`` when every try looped."""
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
        if not is_degenerate(parsed):
            result.degenerate = False
            return result
        result.degenerate = True
    result.error = "degenerate observer output: the model repeated itself on every try"
    return result


def count_input(counter: TokenCounter, messages: list) -> int:
    """Tokens of the messages to observe (what ``ModelByInputTokens`` tiers are keyed on)."""
    count_messages = getattr(counter, "count_messages", None)
    if callable(count_messages):
        return int(count_messages(messages))
    return sum(counter.count_string(str(m.model_dump(mode="json"))) for m in messages)
