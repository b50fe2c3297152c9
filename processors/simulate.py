"""Run the core alone over a conversation and print its timeline — no broker, database or network.

Users run it (``om simulate``) to tune thresholds on their own history before deploying; the
project runs it to check itself: the streaming runtime must produce the same lifecycle sequence.

The model answers jobs through a *responder* (job → result). Model latency is simulated in event
time: a job issued at ``t`` is answered when the conversation reaches ``t + latency_ms`` (or at the
end), so the timeline shows how buffering behaves with a slow model, and stays exactly repeatable.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from processors.config import OMConfig
from processors.machine import Decision, Event, decide, event_key
from processors.machine import KeyState
from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from schemas.messages import ChatMessage

Job = ObserveJob | ReflectJob
Result = ObserveResult | ReflectResult
Responder = Callable[[Job], Result]


@dataclass
class TimelineEntry:
    """The token windows after one input event, and every lifecycle event the core emitted."""

    key: str
    input: str
    at: int
    pending_tokens: int
    message_threshold: int
    observation_tokens: int
    reflection_threshold: int
    buffered_chunks: int
    generation: int
    events: list[dict[str, Any]] = field(default_factory=list)
    rejection: str | None = None

    def to_json(self) -> bytes:
        return orjson.dumps(self.__dict__)


@dataclass(order=True)
class _Due:
    due_at: int
    seq: int
    job: Job = field(compare=False)


class Simulation:
    def __init__(self, config: OMConfig, responder: Responder, latency_ms: int = 0) -> None:
        self.config = config
        self.responder = responder
        self.latency_ms = latency_ms
        self.states: dict[str, KeyState] = {}
        self._queue: list[_Due] = []
        self._seq = 0

    def feed(self, event: Event) -> list[TimelineEntry]:
        """Apply one input event (after delivering the answers due by its time)."""
        entries = []
        if self._queue:
            entries = self._deliver(until=getattr(event, "created_at", None) or getattr(event, "at", 0))
        entries.append(self._apply(event, _describe(event)))
        if self.latency_ms == 0 and self._queue:
            entries.extend(self._deliver(until=None))
        return entries

    def finish(self) -> list[TimelineEntry]:
        """Deliver every outstanding answer (the conversation is over; the model catches up)."""
        return self._deliver(until=None)

    def _deliver(self, until: int | None) -> list[TimelineEntry]:
        entries: list[TimelineEntry] = []
        while self._queue and (until is None or self._queue[0].due_at <= until):
            job = heapq.heappop(self._queue).job
            result = self.responder(job)
            entries.append(self._apply(result, f"{result.kind}:{result.cycle_id}"))
        return entries

    def _apply(self, event: Event, label: str) -> TimelineEntry:
        key = event_key(event, self.config)
        decision = decide(self.states.get(key), event, self.config)
        if decision.state is None:
            self.states.pop(key, None)
        else:
            self.states[key] = decision.state
        for job in decision.jobs:
            self._seq += 1
            heapq.heappush(self._queue, _Due(job.issued_at + self.latency_ms, self._seq, job))
        return _entry(key, label, decision)


def _describe(event: Event) -> str:
    if isinstance(event, ChatMessage):
        return f"message:{event.id}"
    return str(getattr(event, "kind", type(event).__name__))


def _entry(key: str, label: str, decision: Decision) -> TimelineEntry:
    events, status = decision.events, None
    if events and events[-1].type == "status":  # a decision that keeps a state ends with its status
        events, status = events[:-1], events[-1]
    described = [e.to_json_dict() for e in events] if events else []
    rejection = decision.rejection.reason if decision.rejection else None
    if status is None:
        return TimelineEntry(key, label, 0, 0, 0, 0, 0, 0, 0, described, rejection)
    windows = status.windows  # each node read once: a model's attribute read goes through pydantic's hook
    active = windows.active
    messages, observations = active.messages, active.observations
    return TimelineEntry(key, label, status.at, messages.tokens, messages.threshold, observations.tokens,
                         observations.threshold, windows.buffered.observations.chunks, status.generation,
                         described, rejection)


def simulate(
    events: Iterable[Event], config: OMConfig, responder: Responder, latency_ms: int = 0
) -> Iterator[TimelineEntry]:
    """The timeline of ``events`` (messages and control events, in order) under ``config``."""
    simulation = Simulation(config, responder, latency_ms)
    for event in events:
        yield from simulation.feed(event)
    yield from simulation.finish()
