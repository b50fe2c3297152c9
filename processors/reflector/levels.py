"""Compression levels and where the ladder starts (spec §5.8).

Level 0 adds nothing; each higher level asks for a smaller share of the original detail. The
``COMPRESSION LEVEL n`` line is machine-readable on purpose: the deterministic test model keys
its compression on it.
"""

from __future__ import annotations

from processors.reflector.types import ReflectorMode

MAX_LEVEL = 4
EXTRA_ATTEMPTS = 3
FAST_MODEL_HINT = "gemini-2.5-flash"

_GUIDANCE = {
    1: (
        "Your last rewrite was not smaller than the input. Condense the older part of the log, keep "
        "recent detail, and combine related notes while keeping every name, place, event and person. "
        "Collapse repeated tool calls into one note. Keep ✅ markers.",
        8,
    ),
    2: (
        "Compress hard. Summarise older notes heavily; put everything about one file, module or topic "
        "into one short arc; remove anything said twice.",
        6,
    ),
    3: (
        "Compress drastically. Turn the oldest half or more into brief summary notes, merge without "
        "mercy, keep only the outcome of tool work, and drop superseded or procedural notes. Keep names, "
        "dates, decisions, errors, preferences and architecture.",
        4,
    ),
    4: (
        "Compress to the bare minimum, still in the normal note format: at most two or three date groups "
        "per day, one or two notes per older topic, and only the final state of work done step by step.",
        2,
    ),
}


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
    text, tenths = _GUIDANCE[min(level, MAX_LEVEL)]
    return (
        f"## COMPRESSION LEVEL {level} of {MAX_LEVEL}\n\n{text}\n"
        f"Aim for about {tenths}/10 of the original detail."
    )
