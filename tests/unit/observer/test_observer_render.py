from processors.context import format_reminder_timestamp, temporal_gap_text
from processors.observer.render import HistoryRenderer, RenderOptions, history_text
from processors.tokens import get_counter
from schemas.messages import ChatMessage

DEC_4_2024_1733 = 1733333580000  # 2024-12-04 17:33 UTC


def _msg(i: str, role: str, at: int, *parts: dict) -> ChatMessage:
    return ChatMessage(id=i, thread_id="t", role=role, created_at=at, parts=list(parts))


def _render(messages, **options):
    renderer = HistoryRenderer(get_counter(), RenderOptions(**options))
    parts = renderer.render(messages)
    return history_text(parts), parts


def test_s42_attachment_placeholders_and_forwarding():
    message = _msg(
        "1", "user", DEC_4_2024_1733,
        {"type": "text", "text": "Here is the board"},
        {"type": "image", "image": "https://cdn.example.com/a/reference-board.png"},
        {"type": "file", "data": "https://cdn.example.com/floorplan.pdf", "mime_type": "application/pdf"},
        {"type": "file", "data": "QUJD", "filename": "annotated-photo.jpg"},
    )
    text, parts = _render([message])
    assert "[Image #1: reference-board.png]" in text
    assert "[File #1: floorplan.pdf]" in text
    assert "[Image #2: annotated-photo.jpg]" in text
    kinds = [p["type"] for p in parts]
    assert kinds.count("image_url") == 2 and kinds.count("file") == 1
    assert parts[-1]["image_url"]["url"].startswith("data:image/jpeg;base64,")

    text_none, parts_none = _render([message], observe_attachments=["image/*"])
    assert "[File #1: floorplan.pdf]" in text_none  # placeholders always kept
    assert [p["type"] for p in parts_none].count("file") == 0


def test_s42_observe_attachments_false_and_auto():
    message = _msg("1", "user", DEC_4_2024_1733, {"type": "image", "image": "https://x.test/a.png"})
    assert [p["type"] for p in _render([message], observe_attachments=False)[1]] == ["text", "text"]
    auto_unknown = _render([message], observe_attachments="auto", model="mystery/model")[1]
    assert auto_unknown[-1]["type"] == "image_url"
    auto_none = _render([message], observe_attachments="auto", model="om-deterministic/observer")[1]
    assert auto_none[-1]["type"] == "text"


def test_s43_encrypted_content_stripped_and_result_truncated():
    message = _msg("1", "assistant", DEC_4_2024_1733, {
        "type": "tool-invocation", "tool_call_id": "c1", "tool_name": "search", "state": "result",
        "args": {"q": "rome"}, "result": {"encryptedContent": "x" * 6000, "snippet": "word " * 400},
    })
    text, _ = _render([message], tool_result_tokens=50)
    assert "[stripped encryptedContent: 6000 characters]" in text
    assert "... [truncated ~" in text
    assert "Tool Call search (5:33 PM): q: \"rome\"" in text
    assert "Tool Result search: {" in text


def test_times_follow_the_record_time_zone_not_the_process():
    message = _msg("1", "user", DEC_4_2024_1733, {"type": "text", "text": "hi"})
    assert "User (5:33 PM): hi" in _render([message], tz="UTC")[0]
    tokyo = _render([message], tz="Asia/Tokyo")[0]
    assert "Dec 5 2024:" in tokyo and "User (2:33 AM): hi" in tokyo


def test_date_lines_on_day_change_and_repeated_time_omitted():
    messages = [
        _msg("1", "user", DEC_4_2024_1733, {"type": "text", "text": "a"}, {"type": "text", "text": "b"}),
        _msg("2", "assistant", DEC_4_2024_1733 + 86_400_000, {"type": "text", "text": "c"}),
        _msg("3", "assistant", DEC_4_2024_1733 + 86_400_000, {"type": "step-start"}, {"type": "data-om-x", "data": 1}),
    ]
    text, parts = _render(messages)
    assert text.split("\n")[1:] == ["Dec 4 2024:", "User (5:33 PM): a", "User: b", "Dec 5 2024:", "Assistant (5:33 PM): c"]
    assert len(parts) == 3  # the bookkeeping-only message is skipped


def test_tool_errors_denials_and_missing_args():
    messages = [_msg("1", "assistant", DEC_4_2024_1733,
        {"type": "tool-invocation", "tool_call_id": "a", "tool_name": "fetch", "state": "output-error"},
        {"type": "tool-invocation", "tool_call_id": "b", "tool_name": "rm", "state": "output-denied", "args": {},
         "approval_reason": "too risky"},
    )]
    text, _ = _render(messages)
    assert "Tool Call fetch (5:33 PM): [arguments unavailable]" in text
    assert "Tool Error fetch: Tool execution failed" in text
    assert "Tool Denied rm: too risky" in text
    assert "Tool Call rm: arguments: [empty object]" in text  # Mastra's empty-container line


def test_error_results_and_denials_carry_what_mastra_shows():
    """Mastra 1.31: an errored result shows the result, else the error text, else its fallback;
    a blank error text or denial reason falls back too; fallbacks are Mastra's own sentences."""
    tool = {"type": "tool-invocation", "tool_name": "fetch", "args": {"url": "https://x.test"}}
    messages = [_msg("1", "assistant", DEC_4_2024_1733,
        {**tool, "tool_call_id": "a", "state": "result", "result": {"status": 503}, "is_error": True},
        {**tool, "tool_call_id": "b", "state": "result", "result": None, "isError": True, "error_text": "timeout"},
        {**tool, "tool_call_id": "c", "state": "result", "result": "  ", "is_error": True},
        {**tool, "tool_call_id": "d", "state": "output-error", "error_text": "   "},
        {**tool, "tool_call_id": "e", "state": "output-denied", "approval_reason": " "},
        {**tool, "tool_call_id": "f", "state": "result", "result": "ok"},
    )]
    lines = _render(messages)[0].split("\n")
    outcomes = [line for line in lines if line.startswith(("Tool Error", "Tool Denied", "Tool Result"))]
    assert outcomes == [
        "Tool Error fetch: {",
        "Tool Error fetch: timeout",
        "Tool Error fetch: Tool execution failed",
        "Tool Error fetch: Tool execution failed",
        "Tool Denied fetch: Tool call was not approved by the user",
        "Tool Result fetch: ok",
    ]
    assert '  "status": 503' in lines


def test_image_like_file_part_keeps_the_file_title_with_an_image_label():
    """Mastra titles the line by the part's type and numbers it by what it holds."""
    message = _msg("1", "user", DEC_4_2024_1733,
        {"type": "image", "image": "https://x.test/board.png"},
        {"type": "file", "data": "QUJD", "filename": "photo.jpg"},
        {"type": "file", "data": "https://x.test/plan.pdf", "mime_type": "application/pdf"},
    )
    lines = _render([message])[0].split("\n")
    assert lines[2:] == ["Image (5:33 PM): [Image #1: board.png]", "File: [Image #2: photo.jpg]", "File: [File #1: plan.pdf]"]


def test_temporal_gap_reminder_is_a_signal_line_with_its_time():
    """The reminder is a ``signal`` message; Mastra shows it like any message: ``Signal (time): text``."""
    gap = temporal_gap_text(2 * 3_600_000)
    text = f"{gap} — {format_reminder_timestamp(DEC_4_2024_1733, 'UTC')}"
    messages = [
        _msg("__temporal_gap_2", "signal", DEC_4_2024_1733 - 1, {"type": "text", "text": text}),
        _msg("2", "user", DEC_4_2024_1733, {"type": "text", "text": "back again"}),
    ]
    lines = _render(messages)[0].split("\n")
    assert lines[2:] == [
        "Signal (5:32 PM): 2 hours later — 12/04/2024, 5:33 PM UTC",
        "User (5:33 PM): back again",
    ]
