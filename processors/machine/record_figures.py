"""What a step derives from a key's record, remembered while the record is the same object.

The thresholds in force (dynamic under a shared budget, per-record overrides applied) and the
buffered chunks' totals are asked on every event — by planning, the markers and the status event —
and they are functions of the record and the config alone. Records are frozen and replaced, never
written, so from one message to the next (a message changes the window, not the record) the same
record object gives the same figures: they are computed once per record instead of once per event.

The memo holds a record weakly (an entry leaves with its record, so it keeps no stale record and its
observation text alive) and answers only for the config it was computed with.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from processors.config import OMConfig, dynamic_threshold, effective_message_tokens, effective_reflection_tokens
from schemas.record import OMRecord


@dataclass(frozen=True, slots=True)
class RecordFigures:
    message_threshold: int  # the observation threshold now
    reflection_threshold: int
    chunk_message_tokens: tuple[int, ...]  # per buffered chunk, oldest first
    chunk_message_total: int
    chunk_observation_total: int


_MEMO: dict[int, tuple[weakref.ref[OMRecord], OMConfig, RecordFigures]] = {}


def record_figures(record: OMRecord, config: OMConfig) -> RecordFigures:
    key = id(record)
    hit = _MEMO.get(key)
    if hit is not None and hit[1] is config:
        return hit[2]
    resolved, overrides = config.resolved, record.config_overrides
    chunks = record.buffered_chunks
    chunk_message_tokens = tuple(c.message_tokens for c in chunks)
    figures = RecordFigures(
        message_threshold=dynamic_threshold(effective_message_tokens(resolved, overrides),
                                            record.observation_token_count),
        reflection_threshold=effective_reflection_tokens(resolved, overrides),
        chunk_message_tokens=chunk_message_tokens,
        chunk_message_total=sum(chunk_message_tokens),
        chunk_observation_total=sum(c.token_count for c in chunks),
    )
    _MEMO[key] = (weakref.ref(record, lambda _, key=key: _MEMO.pop(key, None)), config, figures)
    return figures
