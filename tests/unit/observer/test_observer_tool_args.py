"""Tool-call arguments as the Observer reads them: Mastra 1.31.0's format, byte for byte.

Every expected string below is what ``formatToolArgumentsForObserver`` of @mastra/memory 1.31.0
returns for the same arguments (run under Node with its bundled tokenx 1.3.0).
"""

from processors.observer.tool_args import ARGS_TOKEN_LIMIT, format_tool_args
from processors.tokens import get_counter

COUNTER = get_counter()


def test_outline_is_breadth_first_with_mastras_paths_and_summaries():
    args = {"path": "src/app.py", "edits": [{"line": 3, "text": "x = 1"}], "opts": {}, "my key": True, "ratio": 0.25}
    assert format_tool_args(args, COUNTER) == "\n".join([
        'path: "src/app.py"',
        "edits: <array, 1 item>",
        "opts: <object>",
        '["my key"]: true',
        "ratio: 0.25",
        "edits[0]: <object>",
        "opts: [empty object]",
        "edits[0].line: 3",
        'edits[0].text: "x = 1"',
    ])


def test_a_container_shows_twenty_entries_and_says_more_were_left_out():
    text = format_tool_args({"items": list(range(25))}, COUNTER)
    lines = text.split("\n")
    assert lines[:3] == ["items: <array, 25 items>", "items: ... [additional entries omitted]", "items[0]: 0"]
    assert lines[-1] == "items[19]: 19" and len(lines) == 22


def test_over_budget_the_outline_keeps_what_fits_and_says_so():
    args = {
        "query": "weather in Lisbon",
        "notes": "The user wants a detailed forecast for the whole week, including wind speed, humidity and the "
        "chance of rain for every afternoon, because they plan to sail.",
    }
    assert format_tool_args(args, COUNTER, token_limit=40) == (
        'query: "weather in Lisbon"\n... [additional argument fields omitted by size limit]'
    )


def test_a_long_argument_is_previewed_up_to_the_token_budget_not_80_characters():
    """Mastra's limit is 2,000 tokens for the whole rendering, not a character count."""
    content = "word " * 5000
    text = format_tool_args({"path": "notes.md", "content": content}, COUNTER)
    head = [
        'path: "notes.md"',
        "content: <string, 25000 characters; preview size-limited>",
        "Large string previews (size-limited):",
        "content:",
    ]
    assert text.split("\n")[:4] == head
    assert text.endswith("\n  | ... [15225 characters omitted]") and len(text) == 9936
    assert COUNTER.count_string(text) <= ARGS_TOKEN_LIMIT


def test_a_short_long_string_is_shown_whole_in_its_preview():
    text = format_tool_args({"body": "line\n" * 40}, COUNTER)
    assert text.startswith("body: <string, 200 characters; preview size-limited>\nLarge string previews (size-limited):\nbody:\n  | line\n")
    assert "omitted" not in text


def test_missing_arguments_and_scalars():
    assert format_tool_args(None, COUNTER) == "[arguments unavailable]"
    assert format_tool_args("ls -la", COUNTER) == '"ls -la"'
    assert format_tool_args(1e21, COUNTER) == "1e+21" and format_tool_args(2.0, COUNTER) == "2"
