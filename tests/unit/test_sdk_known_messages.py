"""streams/sdk/known_messages.py: a context read takes the messages its thread's last read validated,
only where their JSON is the same, makes the chat a body without one left out, and gives what
validating the whole body gives."""

from __future__ import annotations

import copy

import orjson
import pytest
from pydantic import ValidationError

from processors.context import AgentContext
from schemas.messages import ChatMessage
from streams.reader.context_json import context_json, stored_context_json
from streams.reader.models import ContextResponse
from streams.sdk.known_messages import KnownMessages


def _message(i: int, text: str = "") -> ChatMessage:
    return ChatMessage(id=f"m{i}", thread_id="t", resource_id="r", role="user" if i % 2 else "assistant",
                       created_at=1_733_000_000_000 + i, parts=[{"type": "text", "text": text or f"words {i}"}])


def _context(messages: list[ChatMessage], continuation: ChatMessage | None = None) -> AgentContext:
    return AgentContext(system=["preamble", "<observations>\n* 🔴 noted\n</observations>"],
                        continuation=continuation, messages=messages, observed_through=None)


def _body(messages: list[ChatMessage], thread: str = "t") -> dict:
    return orjson.loads(context_json(thread, "r", _context(messages)))


def _lean(context: AgentContext) -> bytes:
    """The body the reader writes for ``chat=false``: the window's messages as a context row stores them."""
    entries = [m.model_dump(mode="json", exclude={"kind", "schema_version"}) for m in context.messages]
    return stored_context_json("t", "r", context, entries)


def _check(known: KnownMessages, body: dict) -> ContextResponse:
    """The response from the body with its chat, and again (a second reader) from it without."""
    expected = ContextResponse.model_validate(copy.deepcopy(body))
    without = KnownMessages()
    without._last = copy.copy(known._last)
    assert without.response({**copy.deepcopy(body), "chat": []}) == expected
    response = known.response(body)
    assert response == expected
    return response


def test_a_message_with_the_same_json_is_the_one_validated_before() -> None:
    known = KnownMessages()
    first = _check(known, _body([_message(1), _message(2)]))
    later = _check(known, _body([_message(1), _message(2), _message(3)]))
    assert later.messages[0] is first.messages[0] and later.messages[1] is first.messages[1]
    edited = _check(known, _body([_message(1), _message(2, "edited"), _message(3)]))
    assert edited.messages[0] is first.messages[0] and edited.messages[1].parts[0].text == "edited"
    assert edited.messages[2] is later.messages[2]


def test_threads_are_kept_apart_and_the_least_recently_read_goes_first() -> None:
    known = KnownMessages(max_threads=1)
    first = _check(known, _body([_message(1)], thread="t"))
    _check(known, _body([_message(1)], thread="u"))  # another thread: its own messages, and "t" goes
    again = _check(known, _body([_message(1)], thread="t"))
    assert again.messages[0] is not first.messages[0]


def test_a_body_that_is_not_a_context_is_refused_as_before() -> None:
    known = KnownMessages()
    for body in (None, {"error": "x"}, {**_body([_message(1)]), "messages": [{"id": "m1"}]}):
        with pytest.raises(ValidationError):
            known.response(body)


def test_the_chat_left_out_is_the_readers_with_a_continuation_and_signals() -> None:
    signal = ChatMessage(id="g", thread_id="t", role="signal", created_at=5, parts=[{"type": "text", "text": "gap"}])
    continuation = ChatMessage(id="c", thread_id="t", role="user", created_at=0,
                               parts=[{"type": "text", "text": "go on"}, {"type": "step-start"}])
    context = _context([_message(1), signal, _message(2, "two\nlines")], continuation)
    full = ContextResponse.model_validate(orjson.loads(context_json("t", "r", context)))
    known = KnownMessages()
    for _ in range(2):  # the second read takes its turns from the first
        lean = orjson.loads(_lean(context))
        assert lean["chat"] == []
        assert known.response(lean) == full
    assert known.response(orjson.loads(_lean(AgentContext()))).chat == []
