"""Request → renderer options and bounded prior observations, shared by both Observer variants."""

from __future__ import annotations

from processors.model_port import TokenCounter
from processors.observer.previous import bound_observations, prior_observations_text
from processors.observer.render import RenderOptions
from processors.observer.types import ObserverRequest


def render_options(request: ObserverRequest, model: str) -> RenderOptions:
    return RenderOptions(
        tz=request.tz,
        model=model,
        observe_attachments=request.settings.observe_attachments,
        tool_result_tokens=request.settings.tool_result_tokens,
    )


def bounded_previous(request: ObserverRequest, counter: TokenCounter) -> tuple[str, bool]:
    pending = request.pending_reflection
    text = prior_observations_text(
        request.prior_observations,
        request.buffered_observations,
        (pending.text, pending.line_count) if pending else None,
    )
    bounded, truncated = bound_observations(text, request.settings.previous_observer_tokens, counter)
    return bounded, truncated or request.previous_truncated
