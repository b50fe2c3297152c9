"""The core over a conversation in event time, with every Observer/Reflector job kept for inspection.

Agent waiting and waste are properties of the state machine's decisions, not of the runtime, so
they are measured on :class:`processors.simulate.Simulation`: the model answers (instantly, with the
fake model) ``latency_ms`` of *event* time after a job is issued, which makes a slow model cheap to
benchmark and the figures exactly repeatable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from processors.config import OMConfig
from processors.simulate import Job, Result, TimelineEntry, simulate
from schemas.messages import ChatMessage
from streams.harness.echo_model import respond

NO_BUFFERING: dict[str, Any] = {"observation": {"bufferTokens": False}}


@dataclass
class Run:
    entries: list[TimelineEntry]
    jobs: list[Job]


def run(options: dict[str, Any], batch: list[ChatMessage], latency_ms: int) -> Run:
    jobs: list[Job] = []

    def responder(job: Job) -> Result:
        jobs.append(job)
        return respond(job)

    entries = list(simulate(batch, OMConfig.from_mastra(options), responder, latency_ms))
    return Run(entries, jobs)
