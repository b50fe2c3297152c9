"""Request → renderer options and bounded prior observations, shared by both Observer variants."""

from __future__ import annotations

from typing import Literal

from processors.model_port import TokenCounter
from processors.observer.previous import bound_observations, prior_observations_text
from processors.observer.render import RenderOptions
from processors.observer.types import ObserverRequest
from schemas.jobs import PendingReflection


def render_options(request: ObserverRequest, model: str) -> RenderOptions:
    return RenderOptions(
        tz=request.tz,
        model=model,
        observe_attachments=request.settings.observe_attachments,
        tool_result_tokens=request.settings.tool_result_tokens,
    )


def bounded_previous(request: ObserverRequest, counter: TokenCounter) -> tuple[str, bool]:
    bounded, truncated = previous_shown(request.prior_observations, request.buffered_observations,
                                        request.pending_reflection, request.settings.previous_observer_tokens, counter)
    return bounded, truncated or request.previous_truncated


def previous_shown(active: str, buffered_chunks: list[str], pending: PendingReflection | None,
                   budget: int | Literal[False] | None, counter: TokenCounter) -> tuple[str, bool]:
    """``(the prior observations as the Observer is shown them, cut?)``: the active log (a pending
    reflection standing in for its lines) and the buffered chunks, within ``budget`` (spec §5.2).
    The processor asks it too, for a job too big to carry the log whole (streams/job_size.py)."""
    text = prior_observations_text(active, buffered_chunks, (pending.text, pending.line_count) if pending else None)
    return bound_observations(text, budget, counter)
