"""Observation groups in an observation log, and the pieces of them that get embedded (spec §8.4).

A group is written as a line-started block::

    <observation-group id="<hex>" range="<firstId>:<lastId>"[ kind="reflection"]>
    …notes…
    </observation-group>

Search indexes each group separately so that a hit can name the exact message range it came
from. Long groups are embedded in line-aligned chunks, because sentence embedders read only the
first few hundred tokens of their input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EMBED_CHUNK_CHARS = 1_000
_GROUP = re.compile(
    r"^[ \t]*<observation-group\s(?P<attrs>[^>]*)>[ \t]*\n(?P<body>.*?)^[ \t]*</observation-group>",
    re.MULTILINE | re.DOTALL,
)
_ATTR = re.compile(r'([\w][\w-]*)="([^"]*)"')


@dataclass(frozen=True)
class ObservationGroup:
    id: str
    range: str
    content: str
    kind: str | None = None


def parse_observation_groups(observations: str) -> list[ObservationGroup]:
    """Every complete group with an ``id``, in order; unterminated or id-less blocks are skipped."""
    groups = []
    for match in _GROUP.finditer(observations):
        attrs = dict(_ATTR.findall(match.group("attrs")))
        if attrs.get("id"):
            groups.append(ObservationGroup(attrs["id"], attrs.get("range", ""), match.group("body").strip(), attrs.get("kind")))
    return groups


def embedding_chunks(text: str, max_chars: int = EMBED_CHUNK_CHARS) -> list[str]:
    """``text`` split at line ends into pieces of at most ``max_chars`` (a longer line is cut)."""
    chunks: list[str] = []
    current = ""
    for line in text.splitlines():
        while len(line) > max_chars:
            if current:
                chunks.append(current)
                current = ""
            chunks.append(line[:max_chars])
            line = line[max_chars:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > max_chars:
            chunks.append(current)
            candidate = line
        current = candidate
    if current.strip():
        chunks.append(current)
    return [chunk for chunk in chunks if chunk.strip()]


def render_groups_for_context(observations: str) -> str | None:
    """Groups as ``## Group `id``` headings with their range (how the agent sees them with retrieval
    on, spec §7.1); None when the text has no groups, so the caller falls back to the optimiser."""
    if not parse_observation_groups(observations):
        return None

    def heading(match: re.Match[str]) -> str:
        attrs = dict(_ATTR.findall(match.group("attrs")))
        return f"## Group `{attrs.get('id', '')}`\n_range: `{attrs.get('range', '')}`_\n\n{match.group('body').strip()}\n"

    return _GROUP.sub(heading, observations)
