"""The port through which Observer, Reflector and extractors reach a language model.

The core builds a :class:`ModelCall` (plain chat messages, chosen model, settings) and awaits a
:class:`ModelClient`; the litellm adapter under ``streams/llm`` implements the client, tests may
implement it with a lambda. Keeping the port here is what lets the prompt/parse/ladder logic stay
free of IO imports while still being an ``async`` pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from schemas.jobs import Usage

Role = Literal["observer", "reflector", "extractor", "reader", "judge"]  # reader/judge: om eval only


@dataclass(frozen=True)
class ModelCall:
    """One request to a model. ``model`` is a Mastra-style ``provider/model`` string.

    ``temperature``/``max_output_tokens`` are sent as given, ``None`` meaning not at all (the role
    defaults are decided in ``processors/config/roles.py``). ``json_schema`` asks for a
    structured answer (extractor follow-up calls). ``cut_off_ok``: an answer cut off at the cap is
    returned as it is (``finish_reason == "length"``) instead of asked again or failed — for callers
    that read only its start, such as ``om eval``'s short answers; never for memory.
    """

    role: Role
    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = None
    max_output_tokens: int | None = None
    provider_options: dict[str, Any] | None = None
    json_schema: dict[str, Any] | None = None
    cut_off_ok: bool = False


@dataclass(frozen=True)
class ModelReply:
    text: str
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1
    model: str = ""
    finish_reason: str | None = None  # "length": the output cap cut the answer off (the client retries)


class ModelCallError(Exception):
    """A call that failed for good: permanent, or transient with retries exhausted."""

    def __init__(self, message: str, *, transient: bool, attempts: int, usage: Usage | None = None):
        super().__init__(message)
        self.transient = transient
        self.attempts = attempts
        self.usage = usage or Usage()


class ModelClient(Protocol):
    async def complete(self, call: ModelCall) -> ModelReply: ...


class TokenCounter(Protocol):
    """The subset of ``processors.tokens`` counters this package needs."""

    def count_string(self, text: str) -> int: ...

    def count_observations(self, text: str) -> int: ...

    def count_observation_lines(self, text: str) -> int: ...

    def count_lines(self, lines: Sequence[str]) -> list[int]: ...

    def count_joined(self, lines: Sequence[str]) -> int: ...


def default_counter() -> TokenCounter:
    """The project's counter; imported late so this package loads before ``processors.tokens`` exists."""
    from processors.tokens import get_counter

    return get_counter()
