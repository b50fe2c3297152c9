"""Jobs bounded in bytes as well as tokens: no job record exceeds the broker's record limit.

The core closes an Observer cycle at a token threshold, but tokens are not bytes: ``reasoning``
and ``data-*`` parts cost 0 tokens (they never reach a model) and can be megabytes, and 10,000
tiny messages are 30k tokens but 1.5 MB of JSON. A job the broker refuses must never be sent
(issue 18: it was dropped while ``observation-start`` committed, and the cycle stayed in flight).

Rules this module keeps:

* A job that fits :data:`~streams.topics.RECORD_LIMIT` is sent byte for byte as the core made it.
* One that does not is compacted first: reasoning and ``data-*`` parts and message ``metadata`` —
  nothing the Observer renders — are dropped. The model sees the same prompt.
* One that still does not fit is not sent: :func:`too_big_result` is the failed result the
  processor folds in its place, so the cycle ends as a model failure would (``observation-failed``
  or ``buffering-failed``, naming the size), never in flight forever. The core keeps cycles small:
  a synchronous call reads at most twice the threshold (processors/machine/call_size.py), so a
  window that a burst grew past the limit is observed in several calls; what is left to refuse here
  is bytes that cost no tokens, or a threshold configured near the limit.
"""

from __future__ import annotations

from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from schemas.messages import ChatMessage, DataPart, ReasoningPart
from streams.topics import RECORD_LIMIT


def fit_job(job: ObserveJob | ReflectJob, key: bytes, limit: int = RECORD_LIMIT) -> bytes | None:
    """The job's record value within ``limit`` (with ``key``), or None when it cannot fit."""
    raw = job.to_bytes()
    if len(raw) + len(key) <= limit:
        return raw
    if isinstance(job, ObserveJob):
        raw = job.model_copy(update={"messages": [_unseen_dropped(m) for m in job.messages]}).to_bytes()
        if len(raw) + len(key) <= limit:
            return raw
    return None


def too_big_result(job: ObserveJob | ReflectJob, size: int, limit: int, now_ms: int) -> ObserveResult | ReflectResult:
    error = (f"the job is {size} bytes, over the broker's record limit ({limit} bytes); "
             f"not sent to the model")
    kind = ObserveResult if isinstance(job, ObserveJob) else ReflectResult
    return kind(cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode,  # type: ignore[arg-type]
                ok=False, error=error, started_at=now_ms, completed_at=now_ms, attempts=0)


def _unseen_dropped(message: ChatMessage) -> ChatMessage:
    parts = [p for p in message.parts if not isinstance(p, (ReasoningPart, DataPart))]
    return message.model_copy(update={"parts": parts, "metadata": None})
