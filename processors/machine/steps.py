"""Which events are a *step* — the moments Mastra runs its OM step (spec §4.3, §4.4).

Mastra decides only in ``processInputStep``, right before each model call of an agent turn. In a
stream of events that moment is recognised from the event itself:

* a **user message** starts a turn: it is **step 0** (early activation, reflection, then the step);
* an **assistant message whose latest step ended in tool results** (every tool invocation after its
  last ``step-start`` is ``result``, ``output-error`` or ``output-denied``) is followed by another
  model call: it is a **step > 0**; so is a ``tool``-role message (a result sent on its own);
* any other assistant message — a final reply, or a tool call still waiting for its result or an
  approval — ends the step and **nothing is decided** until the next step (with
  ``observation.buffer_on_idle`` a ``turn-end`` buffers the turn's messages);
* the control events ``turn-start`` and ``provider-change`` are step 0; an ``idle-tick`` is step 0
  too (this project's extension: an idle TTL acts while the thread is quiet, not at the next turn).

Worker results are not steps. A step that reached the threshold while a cycle was in flight waits
for it (Mastra awaits the buffering op in-process, up to 30 s): the state remembers the deferred
step, and the result that ends the wait resumes it.
"""

from __future__ import annotations

from typing import Literal

from schemas.messages import ChatMessage, StepStartPart, ToolInvocationPart

StepKind = Literal["step-zero", "step"]
_ANSWERED = frozenset({"result", "output-error", "output-denied"})


def step_of(message: ChatMessage) -> StepKind | None:
    """The step a stored message starts, or None when it only ends one."""
    if message.role == "user":
        return "step-zero"
    if message.role == "tool":
        return "step"
    if message.role != "assistant":
        return None
    answered = False
    for part in reversed(message.parts):  # the latest step: the parts after its step-start
        if isinstance(part, StepStartPart):
            break
        if isinstance(part, ToolInvocationPart):
            if part.state not in _ANSWERED:
                return None
            answered = True
    return "step" if answered else None
