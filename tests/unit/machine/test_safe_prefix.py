"""Safe buffer prefix with pending tool calls — spec §10.2 scenario 18, and the incomplete-step rule."""

from processors.machine.safe_prefix import has_incomplete_tool_calls, select_safe_buffer_prefix
from schemas.messages import ChatMessage, StepStartPart, TextPart, ToolInvocationPart


def msg(mid: str, at: int, *, pending: str | None = None, done: str | None = None) -> ChatMessage:
    parts: list = [TextPart(text=f"text {mid}")]
    if pending:
        parts.append(ToolInvocationPart(tool_call_id=pending, tool_name="search", state="call"))
    if done:
        parts.append(ToolInvocationPart(tool_call_id=done, tool_name="search", state="result", result="ok"))
    return ChatMessage(id=mid, thread_id="t", role="assistant", created_at=at, parts=parts)


def ids(messages: list[ChatMessage]) -> list[str]:
    return [m.id for m in messages]


def test_s18_pending_newest_buffers_everything_before_it() -> None:
    window = [msg("a", 100), msg("b", 200), msg("c", 300), msg("d", 400, pending="x")]
    assert ids(select_safe_buffer_prefix(window)) == ["a", "b", "c"]


def test_s18_cut_within_one_ms_defers() -> None:
    window = [msg("a", 100), msg("b", 200), msg("c", 399), msg("d", 400, pending="x")]
    assert select_safe_buffer_prefix(window) == []


def test_s18_older_orphan_call_does_not_block() -> None:
    window = [msg("a", 100), msg("b", 200, pending="old"), msg("c", 300), msg("d", 400)]
    assert ids(select_safe_buffer_prefix(window)) == ["a", "b", "c", "d"]


def test_s18_shared_tool_call_id_across_the_cut_defers() -> None:
    window = [msg("a", 100), msg("b", 200, done="x"), msg("d", 400, pending="x")]
    assert select_safe_buffer_prefix(window) == []


def test_s18_several_newest_with_one_pending_defers() -> None:
    window = [msg("a", 100), msg("b", 400), msg("c", 400, pending="x")]
    assert select_safe_buffer_prefix(window) == []


def test_incomplete_tool_call_only_counts_in_the_latest_step() -> None:
    earlier_step = ChatMessage(
        id="m", thread_id="t", role="assistant", created_at=1,
        parts=[ToolInvocationPart(tool_call_id="x", tool_name="s", state="call"), StepStartPart(),
               TextPart(text="done")],
    )
    assert not has_incomplete_tool_calls([earlier_step])
    assert has_incomplete_tool_calls([msg("a", 1, pending="y")])
    assert not has_incomplete_tool_calls([])


def test_incomplete_tool_call_is_judged_on_the_first_of_the_newest_messages() -> None:
    """With several messages at the newest time, the first of them is the newest (as ``max`` picks)."""
    assert has_incomplete_tool_calls([msg("a", 1), msg("b", 2, pending="y"), msg("c", 2)])
    assert not has_incomplete_tool_calls([msg("a", 1, pending="y"), msg("b", 2), msg("c", 2, pending="z")])
    assert has_incomplete_tool_calls([msg("a", 2, pending="y"), msg("b", 2)])
