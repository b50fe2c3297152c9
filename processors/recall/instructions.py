"""The guidance text that tells an agent how to use recall (spec §8.1), written for this project.

It depends on two facts about the deployment: the scope (``resource``: every thread of the user;
``thread``: only the current one) and whether semantic search is available. With search off the
text never mentions ``mode: "search"``, so the agent is not sent down a path that cannot work.
Custom guidance from the configuration is added under its own heading after the built-in text;
it can extend the rules but never replace them.
"""

from __future__ import annotations

from typing import Literal

Scope = Literal["thread", "resource"]
CUSTOM_HEADING = "### Additional recall guidance"


def recall_instructions(scope: Scope = "resource", custom: str | None = None, search_enabled: bool = True) -> str:
    sections = [
        _INTRO,
        _when_to_use(scope),
        _choosing_a_mode(scope, search_enabled),
        _CURSORS,
        _DETAIL,
        _when_not_needed(scope, search_enabled),
    ]
    extra = (custom or "").strip()
    if extra:
        sections.append(f"{CUSTOM_HEADING}\n{extra}")
    return "\n\n".join(sections)


_INTRO = """## Recall: reading the messages behind your memory

Your memory holds observations: condensed notes about earlier conversation. Some are wrapped in \
`<observation-group range="firstId:lastId">` tags. A range names the first and last raw message \
the notes were written from, and those raw messages are still stored. The `recall` tool reads them."""


def _when_to_use(scope: Scope) -> str:
    lines = [
        "### When to call recall",
        "- The user wants something repeated or shown again exactly as it was: code, quotes, error text, links, "
        "file paths, numbers.",
        "- Your notes mention something but lack the detail the answer needs.",
        "- You want to check a note before relying on it.",
    ]
    if scope == "resource":
        lines.append(
            "- The user refers to another conversation. Look even if no note covers it: other threads of this "
            "user may hold it."
        )
    lines.append(
        "\nNotes keep the gist and drop the details. When the user asks about specific earlier content and you "
        "are not sure your notes are complete, call recall rather than guess."
    )
    return "\n".join(lines)


def _choosing_a_mode(scope: Scope, search_enabled: bool) -> str:
    if scope == "thread":
        lines = [
            "### Which mode",
            "recall only sees the current conversation thread.",
            '- `mode: "messages"` (the default) pages through this thread\'s messages, from a cursor or from '
            "either end.",
        ]
        if search_enabled:
            lines.append('- `mode: "search"` with a `query` finds notes in this thread by meaning.')
        lines.append('- `mode: "threads"` tells you this thread\'s id, title and dates.')
        return "\n".join(lines)
    lines = [
        "### Which mode",
        "recall sees every conversation thread of this user, not only the current one.",
    ]
    if search_enabled:
        lines.append(
            '- `mode: "search"` with a `query` when you do not know where something was discussed. Each result '
            "names its thread and the message ids it came from; use one of those ids as a `cursor`."
        )
    lines += [
        '- `mode: "messages"` when you know where to look: pass `threadId` to read a thread, or a `cursor` taken '
        "from an observation range" + (" or a search result." if search_enabled else "."),
        '- `mode: "threads"` lists the user\'s threads with ids, titles and dates; `before`/`after` narrow it '
        "by creation date.",
    ]
    if search_enabled:
        lines.append(
            "\nSearch only finds what has already been observed and indexed; a short or recent conversation may "
            'exist only as raw messages. If the results do not fit the question, list threads with `mode: "threads"` '
            '(titles and dates are good clues) and read the likely ones with `mode: "messages"`.'
        )
    else:
        lines.append(
            '\nWhen the user mentions an earlier conversation you have no cursor for, list threads with `mode: "threads"` '
            'and read the likely ones with `mode: "messages"`. Threads may have raw messages before any notes exist.'
        )
    return "\n".join(lines)


_CURSORS = """### Reading around a cursor
A range is `firstId:lastId`. Pass ONE of the two ids as `cursor`, never the whole range.
1. Pick the group that matches the question and take the first or last id of its range.
2. Call recall with that id as `cursor`.
3. `page: 1` (the default) reads the messages after the cursor; `page: -1` the ones before it.
4. Go on with `page: 2`, `page: -2`, … while `hasNextPage` / `hasPrevPage` say there is more."""

_DETAIL = """### Detail
By default (`detail: "low"`) each part is shortened and tool calls show only the tool's name. Every \
message shows its id, every part an index such as `[p0]`, `[p1]`.
- A shortened part ends with the exact call that returns it in full, e.g. \
`[recall cursor="<id>" partIndex=2 detail="high" for more]`. When you need the full content, make exactly \
that call: scan at low detail first, then open the parts that matter.
- `detail: "high"` returns full content, one part per call, and says how to reach the next one.
- `partIndex` with a `cursor` returns that single part in full.
- A part too large for one answer comes back with `truncated: true` and `nextCharOffset`. Repeat the same \
call with `charOffset` set to that value, and keep going until no `nextCharOffset` is returned; the pieces \
together are the whole part. Without `charOffset` you get the first piece again.
- `truncated: true` on a page means the page was cut to fit; read fewer messages (`limit`) or single parts."""


def _when_not_needed(scope: Scope, search_enabled: bool) -> str:
    lines = [
        "### When recall is not needed",
        "- The user wants an overview and your notes already cover it.",
        "- The question is about general preferences or facts that need no exact source text.",
    ]
    if scope == "resource":
        tried = "`search` and `threads`" if search_enabled else "`threads`"
        lines.append(
            f"- No observation range fits and {tried} found nothing. Raw messages can exist without notes, so look "
            "before saying the information is not there."
        )
    else:
        lines.append("- None of your observation ranges relates to the topic.")
    return "\n".join(lines)
