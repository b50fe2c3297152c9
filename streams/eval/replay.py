"""Replay one conversation through the core with the configured model; keep what a reader needs.

This is the core's simulation (``processors.simulate``) answering every job through the workers'
own job code and model client — the same prompts, parsing and decisions as ``om run``, without
Kafka or ClickHouse. Jobs are answered as soon as they are issued (no model latency in event time).
The final state gives the OM context (``processors.context.build_context``), as the reader serves it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from processors.config import OMConfig
from processors.context import build_context
from processors.machine import counter_for
from processors.simulate import Simulation
from schemas.jobs import ObserveResult
from schemas.messages import ChatMessage, TextPart
from streams.eval.datasets import Conversation

RESOURCE = "eval-user"


@dataclass
class Replayed:
    """What survives a replay (stored for resume): the OM context as chat messages and the cost."""

    id: str
    context: list[dict[str, Any]]
    observations: str
    message_tokens: int
    observer: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "calls": 0})
    reflector: dict[str, int] = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "calls": 0})
    failed_cycles: int = 0
    now_ms: int = 0
    context_tokens: int = 0
    memory_tokens: int = 0  # observations + unobserved messages: the context less OM's fixed instructions

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def messages_of(conversation: Conversation) -> list[ChatMessage]:
    return [ChatMessage(id=f"{conversation.id}-{i}", thread_id=conversation.id, resource_id=RESOURCE,
                        role=turn.role, created_at=turn.at, parts=[TextPart(text=turn.text)])  # type: ignore[arg-type]
            for i, turn in enumerate(conversation.turns)]


def replay(conversation: Conversation, config: OMConfig, responder: Any,
           fed: Callable[[], None] = lambda: None) -> Replayed:
    """``responder``: job → result (``streams.simulate_cli.model_responder``); ``fed`` is called after
    each message (progress: a real model takes minutes per cycle)."""
    counter = counter_for(config)
    messages = messages_of(conversation)
    usage = {"observer": _zero(), "reflector": _zero()}
    failed = 0

    def counted(job: Any) -> Any:
        nonlocal failed
        result = responder(job)
        role = usage["observer" if isinstance(result, ObserveResult) else "reflector"]
        role["input_tokens"] += result.usage.input_tokens
        role["output_tokens"] += result.usage.output_tokens
        role["calls"] += result.attempts
        failed += 0 if result.ok else 1
        return result

    simulation = Simulation(config, counted)
    for message in messages:
        simulation.feed(message)
        fed()
    simulation.finish()
    state = next(iter(simulation.states.values()), None) if simulation.states else None
    now = max((t.at for t in conversation.turns), default=0) + 3_600_000
    observations = state.record.active_observations if state is not None else ""
    unobserved = list(state.window) if state is not None else messages
    context = build_context(observations, unobserved, now, meta=state.threads.get(conversation.id) if state else None,
                            timezone=config.timezone)
    chat = context.as_chat()
    return Replayed(conversation.id, chat, observations, sum(counter.count_string(t.text) for t in conversation.turns),
                    usage["observer"], usage["reflector"], failed, now,
                    sum(counter.count_string(str(m["content"])) for m in chat),
                    counter.count_observations(observations) + sum(counter.count_string(_text(m)) for m in unobserved))


def _zero() -> dict[str, int]:
    return {"input_tokens": 0, "output_tokens": 0, "calls": 0}


def _text(message: ChatMessage) -> str:
    return "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
