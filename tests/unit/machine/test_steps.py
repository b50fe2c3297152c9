"""Which events are steps, as Mastra runs its OM step before each model call (issue 16.2)."""

from __future__ import annotations

from processors.config import OMConfig
from processors.machine.steps import step_of
from schemas.control import TurnEnd
from schemas.messages import ChatMessage, StepStartPart, TextPart, ToolInvocationPart
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message

SYNC = OMConfig.model_validate({"observation": {"message_tokens": 500, "buffer_tokens": False}})


def _assistant(*parts) -> ChatMessage:
    return ChatMessage(id="a", thread_id="t1", role="assistant", created_at=T0, parts=list(parts))


def _tool(state: str, call_id: str = "c1") -> ToolInvocationPart:
    return ToolInvocationPart(tool_call_id=call_id, tool_name="search", state=state,
                              result="ok" if state == "result" else None)


def test_a_user_message_is_step_zero_and_a_final_reply_is_no_step() -> None:
    assert step_of(message("u", T0)) == "step-zero"
    assert step_of(_assistant(TextPart(text="done"))) is None


def test_tool_results_lead_to_another_model_call_a_pending_call_does_not() -> None:
    assert step_of(_assistant(StepStartPart(), _tool("result"))) == "step"
    assert step_of(_assistant(StepStartPart(), _tool("output-error"), _tool("output-denied", "c2"))) == "step"
    assert step_of(_assistant(StepStartPart(), _tool("result"), _tool("call", "c2"))) is None
    assert step_of(_assistant(StepStartPart(), _tool("approval-requested"))) is None


def test_only_the_latest_step_of_a_message_counts() -> None:
    answered_then_replied = _assistant(StepStartPart(), _tool("result"), StepStartPart(), TextPart(text="done"))
    assert step_of(answered_then_replied) is None
    assert step_of(ChatMessage(id="r", thread_id="t1", role="tool", created_at=T0)) == "step"


def test_the_reply_that_ends_a_turn_decides_nothing_the_next_user_message_does() -> None:
    d = Driver(SYNC)
    d.talk(7, answer=False)  # m0..m6, the user's m6 below the threshold
    d.feed(message("m7", T0 + 7 * MINUTE, role="assistant"))
    assert d.state.pending_tokens() >= 500 and d.jobs == [], "a final reply is not a step"
    d.feed(TurnEnd(thread_id="t1", resource_id="r1", at=T0 + 7 * MINUTE + 1))
    assert d.jobs == []
    d.feed(message("m8", T0 + 8 * MINUTE))
    (job,) = d.jobs
    assert job.mode == "sync" and [m.id for m in job.messages][-2:] == ["m7", "m8"]


def test_a_multi_step_turn_observes_at_the_step_after_the_tool_result() -> None:
    d = Driver(SYNC)
    d.talk(7, answer=False)
    call = message("m7", T0 + 7 * MINUTE, role="assistant")
    pending_call = call.model_copy(update={"parts": [StepStartPart(), *call.parts, _tool("call")]})
    d.feed(pending_call)
    assert d.jobs == []
    answered = pending_call.model_copy(update={"parts": [StepStartPart(), *call.parts, _tool("result")]})
    d.feed(answered)
    (job,) = d.jobs
    assert job.mode == "sync" and job.messages[-1].id == "m7"
