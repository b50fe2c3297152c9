"""Compression levels and where the ladder starts (spec §5.8).

Level 0 adds nothing; each higher level asks for a smaller share of the original detail, and
every level still names what must survive (names, places, events, people, ✅ lines and their
outcomes). The ``COMPRESSION LEVEL n`` line is machine-readable on purpose: the deterministic test
model keys its compression on it. The rules per level are listed in ``processors/reflector/README.md``.
"""

from __future__ import annotations

from processors.reflector.types import ReflectorMode

MAX_LEVEL = 4
EXTRA_ATTEMPTS = 3
FAST_MODEL_HINT = "gemini-2.5-flash"

KEEP_DONE = "- Keep ✅ markers: they show the assistant what is settled already, so it does not redo the work."
KEEP_OUTCOME = "- Keep the concrete outcome each ✅ note records, so that it still says what exactly is done."
MERGE_TOOL_RUNS = (
    "- Fold runs of similar tool calls (several file views, searches or edits in one area) into one "
    "line that says what was explored or changed and what came of it."
)

_GUIDANCE = {
    1: (
        "Your last rewrite came out no smaller than the notes you were given.",
        "Rewrite them again, a little more compressed:",
        [
            "- Near the start, fold more notes into higher-level summaries.",
            "- Near the end, keep more of the fine detail: recent context matters most.",
            "- The memory is getting long: write more densely throughout.",
            "- Combine related items more boldly, but never lose the specific names, places, events "
            "and people.",
            MERGE_TOOL_RUNS,
            KEEP_DONE,
            KEEP_OUTCOME,
        ],
        8,
    ),
    2: (
        "Your rewrite was still too large, even with the previous guidance.",
        "Rewrite them again, compressing much harder:",
        [
            "- Near the start, condense heavily into high-level summaries.",
            "- Near the end, keep the fine detail: recent context matters most.",
            "- The memory is getting very long: write far more densely throughout.",
            "- Combine related items aggressively, but never lose the specific names, places, events "
            "and people.",
            MERGE_TOOL_RUNS,
            "- When one file or module runs through many notes, merge them into one entry that covers "
            "its whole story.",
            KEEP_DONE,
            KEEP_OUTCOME,
            "- Remove whatever is said twice, and merge notes that overlap.",
        ],
        6,
    ),
    3: (
        "Several rewrites have failed to compress enough.",
        "Rewrite them with maximum compression:",
        [
            "- Turn the oldest 50-70% of the notes into short high-level paragraphs: only the key "
            "facts, decisions and outcomes.",
            "- For the newest 30-50%, keep the important details, still written densely.",
            "- Merge without mercy: ten notes about one topic become one or two lines.",
            "- Reduce every sequence of tool calls (views, searches, edits, builds) to its outcome; "
            "drop the individual steps.",
            "- Drop procedure (tool calls, retries, intermediate steps); keep only final results.",
            "- Drop notes that no longer matter or that newer information has replaced.",
            KEEP_DONE,
            KEEP_OUTCOME,
            "- Always keep: names, dates, decisions, errors, the user's preferences and architectural "
            "choices.",
        ],
        4,
    ),
    4: (
        "Many attempts have failed to compress enough; the notes may already be dense from an earlier "
        "reflection.",
        "You MUST cut the number of notes drastically, still in the normal note format (date groups, "
        "bulleted notes with priority markers):",
        [
            "- Tool-call notes are the biggest source of bulk. Collapse every sequence of them into "
            "notes about what was found or achieved: ten notes about opening, searching and editing "
            "files become one (\"Traced the failing export to a timezone bug in the date parser\").",
            "- Never keep single tool calls (opened a file, ran a search, started a build): keep only "
            "what they discovered or accomplished.",
            "- Merge many related notes into fewer, more general ones.",
            "- Merge the date groups of one day into two or three at most.",
            "- For older material, give each topic or task one or two notes with its key outcome.",
            "- For recent material, keep more detail, but still merge related items hard.",
            "- When several notes record step-by-step progress on one task, keep only the final state.",
            "- Keep ✅ markers with their outcomes; related completions may share a line.",
            "- Always keep: the user's preferences, key decisions, architectural choices and unresolved "
            "problems.",
        ],
        2,
    ),
}
_FEWER_IS_BETTER = "A few general notes beat many specific ones that do not fit the budget."


def start_level(mode: ReflectorMode, model_id: str | None) -> int:
    """0 for a manual reflection; 2 for models known to under-compress; else 1."""
    if mode is ReflectorMode.MANUAL:
        return 0
    if model_id and FAST_MODEL_HINT in model_id:
        return 2
    return 1


def last_level(start: int) -> int:
    return min(MAX_LEVEL, start + EXTRA_ATTEMPTS)


def guidance(level: int) -> str:
    """The compression block for ``level`` ('' at level 0)."""
    if level <= 0:
        return ""
    reason, ask, rules, tenths = _GUIDANCE[min(level, MAX_LEVEL)]
    aim = f"Aim for about {tenths}/10 of the original detail."
    if level >= MAX_LEVEL:
        aim = f"{aim} {_FEWER_IS_BETTER}"
    body = "\n".join(rules)
    return f"## COMPRESSION LEVEL {level} of {MAX_LEVEL}\n\n{reason}\n\n{ask}\n{body}\n\n{aim}"
