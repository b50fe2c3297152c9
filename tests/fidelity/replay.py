"""Replay a recorded Mastra run through the core, answering every model call with Mastra's answer.

The messages go in as Mastra stored them (ids, times, texts) through :class:`processors.simulate.
Simulation` — what ``om simulate`` runs — and every Observer/Reflector job runs through the workers'
own job code against a :class:`~streams.llm.cassette.CassetteModel` holding the recorded outputs
of each role in call order (``om simulate --cassette`` with a model-level cassette). Jobs are
answered as soon as they are issued: the recorder let Mastra's background work settle after every
turn. What the core did is collected per turn in the shape the fixture records Mastra's behaviour.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from processors.config import OMConfig
from processors.simulate import Simulation
from schemas.jobs import ObserveJob
from schemas.messages import ChatMessage, TextPart
from streams.llm.cassette import CassetteModel
from streams.simulate_cli import model_responder

FIXTURES = Path(__file__).parent / "fixtures"
COMPARED = ("pending", "generation", "observation_tokens", "chunks", "observer_calls", "activations",
            "reflections", "active_observations")


def load(name: str) -> dict[str, Any]:
    return json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))


def config_of(trace: dict[str, Any]) -> OMConfig:
    return OMConfig.from_mastra({**trace["om_options"], "model": "openai/mock"})


def messages_of(trace: dict[str, Any], turn: dict[str, Any]) -> list[ChatMessage]:
    return [ChatMessage(id=m["id"], thread_id=turn["thread_id"], resource_id=trace["resource_id"],
                        role=m["role"], created_at=m["created_at"], parts=[TextPart(text=m["text"])])
            for m in turn["messages"]]


@dataclass
class TurnOutcome:
    pending: int = 0
    generation: int = 0
    observation_tokens: int = 0
    chunks: list[list] = field(default_factory=list)
    observer_calls: list[list] = field(default_factory=list)
    activations: list[list] = field(default_factory=list)
    reflections: list[list] = field(default_factory=list)
    active_observations: str = ""


def replay(trace: dict[str, Any], outcomes: list[TurnOutcome] | None = None) -> list[TurnOutcome]:
    """Each turn's outcome, appended to ``outcomes`` as it completes (a stopped replay shows how far it
    agreed)."""
    config = config_of(trace)
    outcomes = [] if outcomes is None else outcomes
    labels = {m["id"]: m["label"] for t in trace["turns"] for m in t["messages"]}
    with model_responder(config, CassetteModel(trace["model_calls"])) as answer:
        current = TurnOutcome()

        def respond(job):
            if isinstance(job, ObserveJob):
                trigger = "async-buffer" if job.mode == "buffer" else "turn-sync"
                current.observer_calls.append([trigger, [labels[m.id] for m in job.messages], job.tokens_to_observe])
            else:
                current.reflections.append(["sync" if job.mode == "sync" else "background", job.input_tokens])
            return answer(job)

        simulation = Simulation(config, respond)
        for turn in trace["turns"]:
            for message in messages_of(trace, turn):
                for entry in simulation.feed(message):
                    assert entry.rejection is None, entry.rejection
                    current.activations.extend(
                        [e["operation_type"], e["tokens_activated"], e["observation_tokens"],
                         e["messages_activated"], e["triggered_by"]]
                        for e in entry.events if e["type"] == "activation")
                    (state,) = simulation.states.values()
            record = state.record
            current.pending = state.pending_tokens()
            current.generation = record.generation
            current.observation_tokens = record.observation_token_count
            current.chunks = [[[labels[i] for i in c.message_ids], c.message_tokens, c.token_count]
                              for c in record.buffered_chunks]
            current.active_observations = record.active_observations
            outcomes.append(current)
            current = TurnOutcome()
    return outcomes


def differences(trace: dict[str, Any], outcomes: list[TurnOutcome]) -> list[tuple[int, str, Any, Any]]:
    """(turn, what, ours, Mastra's) for every compared figure that differs."""
    found = []
    for turn, outcome in zip(trace["turns"], outcomes):
        for what in COMPARED:
            ours, theirs = getattr(outcome, what), turn["expect"][what]
            if ours != theirs:
                found.append((turn["turn"], what, ours, theirs))
    return found
