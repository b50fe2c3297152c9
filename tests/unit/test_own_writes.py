"""The SDK appends the client's own messages the reader does not show yet (read-your-writes, issue 19)."""

from __future__ import annotations

from schemas.messages import ChatMessage, TextPart
from streams.reader.models import ChatTurn, ContextResponse
from streams.sdk.own_writes import OwnWrites, with_own_messages

T0 = 1_767_600_000_000


def msg(mid: str, at: int, text: str = "hi", role: str = "user", resource: str | None = "r1") -> ChatMessage:
    return ChatMessage(id=mid, thread_id="t1", resource_id=resource, role=role, created_at=at,
                       parts=[TextPart(text=text)])


def response(messages: list[ChatMessage], observed_through: int | None = None) -> ContextResponse:
    return ContextResponse(thread_id="t1", resource_id="r1", system=["sys"], continuation=None, messages=messages,
                           chat=[ChatTurn(role="system", content="sys")]
                           + [ChatTurn(role=m.role, content=m.parts[0].text) for m in messages],
                           observed_through=observed_through)


def test_unseen_own_messages_are_appended_in_time_order() -> None:
    a, b, c = msg("a", T0, "one"), msg("b", T0 + 2, "three", role="assistant"), msg("c", T0 + 1, "two")
    merged = with_own_messages(response([a]), [a, b, c])
    assert [m.id for m in merged.messages] == ["a", "c", "b"]
    assert [t.content for t in merged.chat] == ["sys", "one", "two", "three"]
    assert merged.own_messages == ["c", "b"]


def test_observed_messages_are_not_appended_again() -> None:
    observed, fresh = msg("a", T0), msg("b", T0 + 10)
    merged = with_own_messages(response([], observed_through=T0 + 1), [observed, fresh])
    assert [m.id for m in merged.messages] == ["b"]


def test_the_ledger_forgets_what_the_reader_covers_and_ignores_other_resources() -> None:
    writes = OwnWrites(kept=2)
    writes.remember([msg("a", T0), msg("b", T0 + 1), msg("c", T0 + 2), msg("x", T0 + 3, resource="r2")])
    merged = writes.merge(response([msg("b", T0 + 1)]))
    assert [m.id for m in merged.messages] == ["b", "c"], "kept=2 dropped the oldest; r2's message is not r1's"
    assert writes.merge(response([msg("b", T0 + 1), msg("c", T0 + 2)])).own_messages == []


def test_nothing_sent_means_the_reader_answer_as_is() -> None:
    original = response([msg("a", T0)])
    assert OwnWrites().merge(original) is original


def test_a_thread_this_client_wrote_to_is_known_by_the_resource_it_wrote_as() -> None:
    writes = OwnWrites()
    writes.remember([msg("a", T0, resource="r1")])
    assert writes.sent_as("t1", None) == "r1" and writes.sent_as("t1", "r1") == "r1"
    assert writes.sent_as("t1", "r2") is None and writes.sent_as("t9", None) is None
