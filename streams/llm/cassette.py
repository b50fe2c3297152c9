"""A model that answers from a recording: each role's recorded outputs, in call order.

``om simulate --cassette`` takes such a recording (JSONL lines ``{"role": "observer", "output": …}``,
e.g. the model calls of a recorded Mastra run) and runs every job through the workers' own job code —
prompts, parsing, the compression ladder — so a replay checks all of it, not only the decisions.
A call the recording does not have stops the run, naming it: the core asked for a call the recorded
run never made.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from typing import Any

from processors.model_port import ModelCall, ModelReply


class CassetteExhausted(Exception):
    """The core made a model call the recording does not have."""


class CassetteModel:
    def __init__(self, calls: Iterable[dict[str, Any]]) -> None:
        self.queues: dict[str, deque[str]] = defaultdict(deque)
        for call in calls:
            self.queues[call["role"]].append(call["output"])
        self.used: dict[str, int] = defaultdict(int)

    def left(self) -> dict[str, int]:
        return {role: len(queue) for role, queue in self.queues.items() if queue}

    async def complete(self, call: ModelCall) -> ModelReply:
        queue = self.queues[call.role]
        self.used[call.role] += 1
        if not queue:
            raise CassetteExhausted(f"the core made {call.role} call #{self.used[call.role]}, "
                                    "which the recorded run never made")
        return ModelReply(text=queue.popleft(), model=call.model)


def is_model_cassette(first_line: dict[str, Any]) -> bool:
    """Model-level recordings carry ``role`` and ``output``; job-level ones carry ``kind``."""
    return "role" in first_line and "output" in first_line
