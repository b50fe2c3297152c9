"""A seeded interleaving fuzz of ``decide``: random arrivals, answers in random order, duplicates,
stale results, idle gaps and reflections, with the lifecycle invariants checked after every step.

The invariants are those of Mastra's own lifecycle fuzz (spec §4.11) adapted to a fold:
coverage, no discarded work, chunk order, no stranded chunk, monotonic cursor, no double apply.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from processors.config import OMConfig
from processors.machine.decide import decide
from processors.machine.state import KeyState
from schemas.control import IdleTick, TurnEnd, TurnStart
from schemas.jobs import ObserveJob, ReflectJob
from schemas.messages import ChatMessage, TextPart, ToolInvocationPart
from streams.harness.echo_model import respond

CONFIGS = [
    {"observation": {"message_tokens": 400}, "reflection": {"observation_tokens": 300}},
    {"observation": {"message_tokens": 400, "buffer_tokens": False},
     "reflection": {"observation_tokens": 300, "activate_after_idle": "5m"}},
    {"observation": {"message_tokens": 600, "buffer_activation": 0.5, "block_after": 1.5},
     "reflection": {"observation_tokens": 400, "activate_after_idle": "auto"}, "activate_after_idle": "5m"},
    {"share_token_budget": True, "observation": {"message_tokens": 300, "buffer_tokens": False},
     "reflection": {"observation_tokens": 300}},
    {"observation": {"message_tokens": 500, "buffer_on_idle": True},
     "reflection": {"observation_tokens": 350, "activate_on_provider_change": True},
     "activate_on_provider_change": True, "temporal_markers": True},
]
MODELS = ["openai/gpt-4o", "anthropic/claude-sonnet-4", "google/gemini-2.5-flash"]


class InvariantBroken(AssertionError):
    pass


@dataclass
class Fuzz:
    seed: int
    steps: int = 70
    rng: random.Random = field(init=False)
    config: OMConfig = field(init=False)
    state: KeyState | None = None
    jobs: list[ObserveJob | ReflectJob] = field(default_factory=list)
    answered: list = field(default_factory=list)
    sent: dict[str, ChatMessage] = field(default_factory=dict)
    covered: dict[str, str] = field(default_factory=dict)
    chunks_stored: list[str] = field(default_factory=list)
    chunks_activated: list[str] = field(default_factory=list)
    applied_cycles: set[str] = field(default_factory=set)
    cursor: int = 0
    clock: int = 1_733_000_000_000
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.config = OMConfig.model_validate(self.rng.choice(CONFIGS))

    def run(self) -> None:
        for number in range(self.steps):
            self.one_step(number)
        while self.jobs:
            self.answer(self.jobs.pop(0), ok=True)
        self.check()

    def one_step(self, number: int) -> None:
        roll = self.rng.random()
        if roll < 0.5 or not self.sent:
            self.new_message(number)
        elif roll < 0.75 and self.jobs:
            self.answer(self.jobs.pop(self.rng.randrange(len(self.jobs))), ok=self.rng.random() > 0.1)
        elif roll < 0.8 and self.answered:
            self.feed(self.rng.choice(self.answered), "duplicate result")
        elif roll < 0.83 and self.answered:
            stale = self.rng.choice(self.answered).model_copy(update={"cycle_id": f"ghost-{number}"})
            self.feed(stale, "stale result")
        elif roll < 0.88:
            self.clock += self.rng.choice([60_000, 301_000, 3_600_000])
            self.feed(IdleTick(key="thread:t", at=self.clock), "idle tick")
        elif roll < 0.92:
            self.feed(TurnStart(thread_id="t", resource_id="r", at=self.clock,
                                model=self.rng.choice(MODELS)), "turn start")
        elif roll < 0.95:
            self.feed(TurnEnd(thread_id="t", resource_id="r", at=self.clock), "turn end")
        else:
            old = self.rng.choice(list(self.sent.values()))
            self.feed(old, f"re-send {old.id}")
        self.check()

    def new_message(self, number: int) -> None:
        self.clock += self.rng.choice([1_000, 30_000, 60_000, 900_000])
        at = self.clock - (self.rng.choice([0, 0, 0, 120_000]))
        role = self.rng.choice(["user", "assistant"])
        parts: list = [TextPart(text=" ".join(f"w{self.rng.randrange(500)}" for _ in range(self.rng.randrange(5, 60))))]
        if role == "assistant" and self.rng.random() < 0.15:
            parts.append(ToolInvocationPart(tool_call_id=f"c{number}", tool_name="search"))
        message = ChatMessage(id=f"m{number}", thread_id="t", resource_id="r", role=role, created_at=at,
                              parts=parts, model=self.rng.choice(MODELS) if role == "assistant" else None)
        self.sent[message.id] = message
        self.feed(message, f"message {message.id} at {at}")

    def answer(self, job: ObserveJob | ReflectJob, ok: bool) -> None:
        result = respond(job, ok=ok)
        self.answered.append(result)
        self.feed(result, f"answer {job.kind}/{job.mode} {job.cycle_id} ok={ok}")

    def feed(self, event, label: str) -> None:
        self.log.append(label)
        decision = decide(self.state, event, self.config)
        if decision.rejection is not None:
            raise InvariantBroken(f"unexpected rejection: {decision.rejection}")
        self.state = decision.state
        self.jobs.extend(decision.jobs)
        for ev in decision.events:
            self.observe_event(ev)

    def observe_event(self, ev) -> None:
        done_types = {"observation-end", "buffering-end", "activation"}
        if ev.type in done_types:
            tag = (ev.type, ev.cycle_id)
            if tag in self.applied_cycles:
                raise InvariantBroken(f"{ev.type} applied twice for {ev.cycle_id}")
            self.applied_cycles.add(tag)
        if ev.type == "buffering-end" and ev.operation_type == "observation":
            self.chunks_stored.append(ev.cycle_id)
        if ev.type == "activation" and ev.operation_type == "observation":
            self.chunks_activated.append(ev.cycle_id)
        if ev.type in ("activation", "observation-end") and ev.operation_type == "observation":
            for mid in ev.message_ids:
                if mid in self.covered:
                    raise InvariantBroken(f"message {mid} observed twice ({self.covered[mid]}, {ev.cycle_id})")
                self.covered[mid] = ev.cycle_id

    def check(self) -> None:
        state = self.state
        assert state is not None
        window = {m.id for m in state.window}
        for mid in self.sent:
            if (mid in window) == (mid in self.covered):
                where = "both in the window and observed" if mid in window else "lost"
                raise InvariantBroken(f"message {mid} is {where}")
        buffered = [c.cycle_id for c in state.record.buffered_chunks]
        if self.chunks_activated != self.chunks_stored[: len(self.chunks_activated)]:
            raise InvariantBroken("chunks activated out of order")
        if buffered != self.chunks_stored[len(self.chunks_activated):]:
            raise InvariantBroken(f"stored chunks {buffered} != not yet activated "
                                  f"{self.chunks_stored[len(self.chunks_activated):]} (stranded or lost)")
        cursor = state.record.last_observed_at or 0
        if cursor < self.cursor:
            raise InvariantBroken(f"cursor moved backward {self.cursor} -> {cursor}")
        self.cursor = cursor


def run_seed(seed: int) -> None:
    fuzz = Fuzz(seed)
    try:
        fuzz.run()
    except AssertionError as exc:
        tail = "\n  ".join(fuzz.log[-12:])
        raise AssertionError(
            f"seed {seed} broke an invariant: {exc}\n  last steps:\n  {tail}\n"
            f"replay with: OM_FUZZ_SEED={seed} .venv/bin/pytest tests/unit/machine/test_decide_fuzz.py"
        ) from exc
