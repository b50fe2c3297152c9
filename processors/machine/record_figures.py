"""What a step derives from a key's record, remembered while the record is the same object.

The thresholds in force (dynamic under a shared budget, per-record overrides applied) and the
buffered chunks' totals are asked on every event — by planning, the markers and the status event —
and they are functions of the record and the config alone. Records are frozen and replaced, never
written, so from one message to the next (a message changes the window, not the record) the same
record object gives the same figures: they are computed once per record instead of once per event.

The memo keeps the record and the config it was computed for and compares them by identity, so a
reused ``id`` never answers; it forgets its oldest half when full (forgetting only costs a
recomputation).
"""

from __future__ import annotations

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


_MEMO: dict[int, tuple[OMRecord, OMConfig, RecordFigures]] = {}
_MEMO_SIZE = 4096


def record_figures(record: OMRecord, config: OMConfig) -> RecordFigures:
    hit = _MEMO.get(id(record))
    if hit is not None and hit[0] is record and hit[1] is config:
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
    if len(_MEMO) >= _MEMO_SIZE:
        for stale in list(_MEMO)[: _MEMO_SIZE // 2]:  # oldest half (insertion order)
            del _MEMO[stale]
    _MEMO[id(record)] = (record, config, figures)
    return figures
