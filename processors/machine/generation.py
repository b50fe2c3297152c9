"""Rolling a key's record over to a new generation — what every reflection ends in (spec §4.8).

Rules this module keeps:

* A reflection covers the first ``line_count`` lines it was given. Lines appended meanwhile (an
  activation while the Reflector ran) are kept as the tail of the new generation — Mastra's
  synchronous path wrote its stale snapshot instead (P6).
* A new generation carries the buffered chunks and the cursor over (fixes P1 and the cursor bug);
  a result for an older generation is stale and dropped by the caller.
* Record ids are deterministic per (key, generation), so a replay rebuilds the same ids.
"""

from __future__ import annotations

import uuid

from processors.machine.observation_groups import spanning_range, wrap_group
from processors.reflector.background_slice import activation_paragraphs
from processors.machine.step import Step

_RECORD_NAMESPACE = uuid.UUID("6f1d2f0e-9f5b-4d0a-8f7e-3c1f4b9a2e10")


def record_id(key: str, generation: int) -> str:
    """Deterministic per (key, generation): a replay rebuilds the same ids (ARCHITECTURE rule 5)."""
    return str(uuid.uuid5(_RECORD_NAMESPACE, f"{key}#{generation}"))


def roll_over(step: Step, reflection: str, line_count: int) -> None:
    """Start generation + 1 from the stored head: reflection + uncovered tail, chunks carried over."""
    record = step.state.record
    if step.config.retrieval_config() is not None:
        covered = "\n".join(record.active_observations.split("\n")[:line_count])
        reflection = wrap_group(reflection, f"reflection:{record.key}:{record.generation}",
                                spanning_range(covered), kind="reflection")
    paragraphs = activation_paragraphs(reflection, record.active_observations, line_count)
    text = "\n\n".join(paragraphs)
    generation = record.generation + 1
    step.update(
        record=record.model_copy(update={
            "id": record_id(record.key, generation),
            "generation": generation,
            "origin_type": "reflection",
            "active_observations": text,
            "observation_token_count": step.counter.count_paragraphs(paragraphs),
            "buffered_reflection": None,
            "buffered_reflection_tokens": 0,
            "buffered_reflection_input_tokens": 0,
            "reflected_observation_line_count": 0,
            "buffered_reflection_cycle_id": None,
            "last_buffered_at_tokens": 0,
            "created_at": step.now,
            "updated_at": step.now,
        }),
        reflection_buffer_started=False,
    )
    step.record_changed = True
