"""Writing a run's figures into ``bench/RESULTS.md`` without losing what people wrote there.

Each section of the file is its heading, the block of figures the benchmark printed, then prose:
when the figures were taken, what they are compared with, where the time goes. A run replaces only
the figure blocks of the sections it ran; every other section, and all prose, stays as it was. A
section the file does not have yet is added at the end, as the run printed it.
"""

from __future__ import annotations

FENCE = "```"


def merged(existing: str, sections: list[str]) -> str:
    """``existing`` with each of ``sections`` ("## title", a blank line, a fenced block) merged in."""
    text = existing
    for section in sections:
        heading = section.split("\n", 1)[0]
        block = section[section.index(FENCE):].rstrip()
        at = text.find(heading + "\n")
        if at < 0:
            text = text.rstrip() + "\n\n" + section.rstrip() + "\n"
            continue
        body = at + len(heading) + 1
        following = text.find("\n## ", body)
        following = len(text) if following < 0 else following
        start = text.find(FENCE, body, following)
        end = text.find(FENCE, start + len(FENCE), following) if start >= 0 else -1
        if start < 0 or end < 0:
            text = text[:body] + "\n" + block + "\n" + text[body:]
        else:
            text = text[:start] + block + text[end + len(FENCE):]
    return text
