"""A cycle's trace id and root span id, derived from its cycle id: the same in every process.

The processor that issues a cycle's job, the worker that runs it and the processor that applies
its result never share memory, and the job record carries no trace context. Each derives the
cycle's trace from the cycle id alone, so they all join one trace with no schema change, a job
re-run after a crash lands in the same trace, and an operator holding a cycle id (from a log line
or a lifecycle event) can compute the trace id to look it up.

Pure: hashlib only (no OpenTelemetry import), so the ids can be computed with tracing off.
"""

from __future__ import annotations

import hashlib

_DOMAIN = b"om-cycle-trace:"


def cycle_ids(cycle_id: str) -> tuple[int, int]:
    """``(trace_id, span_id)`` of the cycle's root span: 128 and 64 bits of a BLAKE2b digest, never 0."""
    digest = hashlib.blake2b(_DOMAIN + cycle_id.encode(), digest_size=24).digest()
    return int.from_bytes(digest[:16], "big") or 1, int.from_bytes(digest[16:], "big") or 1


def trace_id(cycle_id: str) -> str:
    """The cycle's trace id as tracing backends show it (32 lowercase hex digits)."""
    return f"{cycle_ids(cycle_id)[0]:032x}"
