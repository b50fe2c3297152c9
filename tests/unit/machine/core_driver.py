"""Drives ``decide`` for one key the way the processor would, keeping jobs until a test answers them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from processors.config import OMConfig
from processors.machine.decide import Decision, Event, decide
from processors.machine.state import KeyState
from schemas.jobs import ObserveJob, ReflectJob
from schemas.messages import ChatMessage, TextPart
from streams.harness.echo_model import respond

MINUTE = 60_000
T0 = 1_733_000_000_000  # 2024-11-30T20:53:20Z


def words(n: int, seed: str = "w") -> str:
    return " ".join(f"{seed}{i % 97}" for i in range(n))


def message(mid: str, at: int, *, role: str = "user", text: str | None = None,
            thread: str = "t1", resource: str = "r1", **extra) -> ChatMessage:
    return ChatMessage(id=mid, thread_id=thread, resource_id=resource, role=role, created_at=at,
                       parts=[TextPart(text=text if text is not None else words(60, mid))], **extra)


@dataclass
class Driver:
    config: OMConfig
    state: KeyState | None = None
    jobs: list[ObserveJob | ReflectJob] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    def feed(self, event: Event) -> Decision:
        decision = decide(self.state, event, self.config)
        self.decisions.append(decision)
        if decision.rejection is None:
            self.state = decision.state
        self.jobs.extend(decision.jobs)
        return decision

    def answer(self, job: ObserveJob | ReflectJob, *, ok: bool = True) -> Decision:
        self.jobs.remove(job)
        return self.feed(respond(job, ok=ok))

    def answer_all(self) -> None:
        while self.jobs:
            self.answer(self.jobs[0])

    def events(self, kind: str | None = None) -> list:
        found = [e for d in self.decisions for e in d.events if e.type != "status"]
        return [e for e in found if kind is None or e.type == kind]

    def talk(self, count: int, *, start: int = T0, step: int = MINUTE, prefix: str = "m",
             answer: bool = True) -> None:
        for i in range(count):
            role = "user" if i % 2 == 0 else "assistant"
            self.feed(message(f"{prefix}{i}", start + i * step, role=role))
            if answer:
                self.answer_all()


def mixed_arrivals(d: Driver, seed: int, count: int = 300) -> Iterator[int]:
    """Feed ``d`` ``count`` messages in a seeded mix — an id sent again with other text (perhaps still
    unobserved), a late one between earlier messages, a new one — answering every job about half the
    time; yields each step's index once its message is in."""
    rng = random.Random(seed)
    ids: list[str] = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.15 and ids:
            mid = rng.choice(ids)
            event = message(mid, T0 + i * MINUTE, text=words(rng.randint(5, 200), f"x{i}"))
        elif roll < 0.3:
            mid = f"late{i}"
            event = message(mid, T0 + (i - rng.randint(1, 5)) * MINUTE + 1)
        else:
            mid = f"m{i}"
            event = message(mid, T0 + i * MINUTE, role=rng.choice(["user", "assistant"]))
        ids.append(mid)
        d.feed(event)
        if rng.random() < 0.5:
            d.answer_all()
        yield i
