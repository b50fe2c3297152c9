"""A step writes its updates into its own copy of the key state (processors/machine/step.py, issue 20):
every state ``decide`` was given — and every one it returned earlier — stays as it was, through
messages, buffering, activation, reflection and a rejected event."""

from processors.config import OMConfig
from schemas.messages import ChatMessage, TextPart
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message

CONFIG = OMConfig.model_validate({"observation": {"message_tokens": 2000}, "reflection": {"observation_tokens": 600}})


def test_no_decision_writes_into_a_state_it_was_given() -> None:
    d = Driver(CONFIG)
    kept = []  # (state, its bytes, its set fields) as each decision left it
    for i in range(60):
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 == 0 else "assistant"))
        kept.append((d.state, d.state.to_bytes(), set(d.state.model_fields_set)))
        d.answer_all()
        kept.append((d.state, d.state.to_bytes(), set(d.state.model_fields_set)))
    given = d.state
    refused = d.feed(ChatMessage(id="x", thread_id="t1", resource_id="r-other", role="user", created_at=T0 + 61 * MINUTE,
                                 parts=[TextPart(text="another resource's message")]))
    assert refused.rejection is not None and refused.state is given
    kept.append((given, given.to_bytes(), set(given.model_fields_set)))
    kinds = {e.type for e in d.events()}
    assert {"buffering-start", "activation"} <= kinds and any(e.operation_type == "reflection" for e in d.events())
    for state, raw, fields_set in kept:
        assert state.to_bytes() == raw and state.model_fields_set == fields_set
