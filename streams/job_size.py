"""Jobs bounded in bytes as well as tokens: no job record exceeds the broker's record limit.

The core closes an Observer cycle at a token threshold, but tokens are not bytes: ``reasoning``
and ``data-*`` parts cost 0 tokens (they never reach a model) and can be megabytes, and 10,000
tiny messages are 30k tokens but 1.5 MB of JSON. A job the broker refuses must never be sent
(issue 18: it was dropped while ``observation-start`` committed, and the cycle stayed in flight).

Rules this module keeps:

* A job that fits the jobs topic's record limit (16 MiB by default, 1 MB on topics an earlier version
  made: streams/topics.py) is sent byte for byte as the core made it.
* One that does not is compacted first: reasoning and ``data-*`` parts and message ``metadata`` —
  nothing the Observer renders — are dropped. Then, if it still does not fit, the prior log (with
  its buffered chunks and a pending reflection) becomes what the Observer will be shown of it, cut
  to ``previous_observer_tokens`` (processors/observer/previous.py), with ``previous_truncated`` set
  when that cut something: a log that ``observationTokens`` let grow past the limit (a 400,000-token
  threshold made a sync job of 1.12 MB) no longer fails every Observer cycle. Either way the model
  sees the same prompt. The cut runs only then: on the common path the worker that calls the model
  bounds the log, off the processor's time. An Observer worker older than the field refuses such a
  job (dead-lettered): upgrade the ``llm`` role before the processors.
* One that still does not fit is not sent: :func:`too_big_result` is the failed result the
  processor folds in its place, so the cycle ends as a model failure would (``observation-failed``
  or ``buffering-failed``, naming the size), never in flight forever. The core keeps cycles small:
  a synchronous call reads at most twice the threshold (processors/machine/call_size.py), so a
  window that a burst grew past the limit is observed in several calls; what is left to refuse here
  is bytes that cost no tokens, or a threshold configured near the limit.
"""

from __future__ import annotations

from collections.abc import Callable

from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from schemas.messages import ChatMessage, DataPart, ReasoningPart
from streams.topics import RECORD_LIMIT

BoundPrevious = Callable[[ObserveJob], tuple[str, bool]]
"""A job's prior log as the Observer will be shown it: ``(text, truncated?)``."""


def fit_job(job: ObserveJob | ReflectJob, key: bytes, limit: int = RECORD_LIMIT,
            bound_previous: BoundPrevious | None = None) -> bytes | None:
    """The job's record value within ``limit`` (with ``key``), or None when it cannot fit.
    ``bound_previous``: the configured bound of the prior log (None: ``previous_observer_tokens`` is off)."""
    raw = job.to_bytes()
    if len(raw) + len(key) <= limit:
        return raw
    if isinstance(job, ObserveJob):
        job = job.model_copy(update={"messages": [_unseen_dropped(m) for m in job.messages]})
        raw = job.to_bytes()
        if len(raw) + len(key) <= limit:
            return raw
        if bound_previous is not None:
            raw = _previous_as_shown(job, bound_previous).to_bytes()
            if len(raw) + len(key) <= limit:
                return raw
    return None


def _previous_as_shown(job: ObserveJob, bound_previous: BoundPrevious) -> ObserveJob:
    shown, truncated = bound_previous(job)
    if not truncated and not shown.strip():
        return job
    return job.model_copy(update={"prior_observations": shown, "buffered_observations": [],
                                  "pending_reflection": None, "previous_truncated": truncated or None})


def too_big_result(job: ObserveJob | ReflectJob, size: int, limit: int, now_ms: int) -> ObserveResult | ReflectResult:
    error = (f"the job is {size} bytes, over the broker's record limit ({limit} bytes); "
             f"not sent to the model")
    kind = ObserveResult if isinstance(job, ObserveJob) else ReflectResult
    return kind(cycle_id=job.cycle_id, key=job.key, generation=job.generation, mode=job.mode,  # type: ignore[arg-type]
                ok=False, error=error, started_at=now_ms, completed_at=now_ms, attempts=0)


def _unseen_dropped(message: ChatMessage) -> ChatMessage:
    parts = [p for p in message.parts if not isinstance(p, (ReasoningPart, DataPart))]
    return message.model_copy(update={"parts": parts, "metadata": None})
