"""streams/reader/context_json.py: the context body written from each message's kept JSON is the
response model's JSON, byte for byte, whatever the context (the model stays the definition); the
lean body written from the stored entries is that JSON without its chat once validated."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from processors.context import AgentContext
from schemas.messages import ChatMessage, ImagePart, StepStartPart
from streams.reader.context_json import MessageJson, context_json, stored_context_json
from streams.reader.models import ContextResponse
from tests.unit.test_schema_round_trips import _ids, _parts, _text

_more_parts = _parts | st.builds(ImagePart, image=_text, mime_type=st.none() | _text) | st.builds(StepStartPart)
_messages = st.builds(ChatMessage, id=_ids, thread_id=_ids, resource_id=st.none() | _ids,
                      role=st.sampled_from(["user", "assistant", "system", "tool", "signal"]),
                      created_at=st.integers(0, 2**40), parts=st.lists(_more_parts, max_size=4),
                      model=st.none() | _text, metadata=st.none() | st.dictionaries(_text, _text, max_size=3))


def _model_body(thread_id: str, resource_id: str, context: AgentContext) -> bytes:
    return orjson.dumps(ContextResponse.of(thread_id, resource_id, context).model_dump(mode="json", exclude_none=False))


@settings(max_examples=200, deadline=None)
@given(thread_id=_ids, resource_id=_ids, system=st.lists(_text, max_size=3), continuation=st.none() | _messages,
       messages=st.lists(_messages, max_size=6), observed_through=st.none() | st.integers(0, 2**40))
def test_the_body_is_the_response_models_json(thread_id: str, resource_id: str, system: list[str],
                                              continuation: ChatMessage | None, messages: list[ChatMessage],
                                              observed_through: int | None) -> None:
    context = AgentContext(system=system, continuation=continuation, messages=messages,
                           observed_through=observed_through)
    known = MessageJson()
    assert context_json(thread_id, resource_id, context, known) == _model_body(thread_id, resource_id, context)
    again = AgentContext(system=system, continuation=continuation, messages=messages + messages[:1],
                         observed_through=observed_through)  # the kept pieces, and one message twice
    assert context_json(thread_id, resource_id, again, known) == _model_body(thread_id, resource_id, again)


def _stored(message: ChatMessage) -> dict[str, Any]:
    """A context row's entry of the message, as the sink writes it (streams/sink/context_appends.py):
    no defaults of the record's own, the parts and metadata as JSON fragments."""
    fields = message.model_dump(mode="json", exclude={"kind", "schema_version"})
    fields["parts"] = orjson.Fragment(orjson.dumps(fields["parts"]))
    if fields["metadata"] is not None:
        fields["metadata"] = orjson.Fragment(orjson.dumps(fields["metadata"]))
    return fields


@settings(max_examples=200, deadline=None)
@given(thread_id=_ids, resource_id=_ids, system=st.lists(_text, max_size=3), continuation=st.none() | _messages,
       messages=st.lists(_messages, max_size=6), observed_through=st.none() | st.integers(0, 2**40))
def test_the_lean_body_of_stored_entries_validates_to_the_model_without_chat(
        thread_id: str, resource_id: str, system: list[str], continuation: ChatMessage | None,
        messages: list[ChatMessage], observed_through: int | None) -> None:
    context = AgentContext(system=system, continuation=continuation, messages=messages,
                           observed_through=observed_through)
    body = stored_context_json(thread_id, resource_id, context, [_stored(m) for m in messages])
    expected = ContextResponse.of(thread_id, resource_id, context).model_copy(update={"chat": []})
    assert ContextResponse.model_validate_json(body) == expected
    assert orjson.loads(body)["messages"] == [orjson.loads(orjson.dumps(_stored(m))) for m in messages]


def test_a_message_is_encoded_once_and_found_by_identity_only(monkeypatch: Any) -> None:
    message = ChatMessage(id="m", thread_id="t", role="user", created_at=1, parts=[{"type": "text", "text": "hi"}])
    known = MessageJson()
    first = known.of([message])
    monkeypatch.setattr(ChatMessage, "model_dump", lambda *a, **k: (_ for _ in ()).throw(AssertionError("again")))
    assert known.of([message]) == first
    twin = message.model_copy()
    monkeypatch.undo()
    assert known.of([twin]) == first  # equal text, another object: encoded, not looked up


def test_bounded_least_recently_used_dropped_first() -> None:
    messages = [ChatMessage(id=f"m{i}", thread_id="t", role="user", created_at=i,
                            parts=[{"type": "text", "text": "x" * 100}]) for i in range(3)]
    size = sum(map(len, MessageJson().of(messages[:1])[0]))
    known = MessageJson(max_bytes=2 * size + 10)
    for message in messages:
        known.of([message])
    assert len(known._memo._values) == 2 and id(messages[0]) not in known._memo._values
