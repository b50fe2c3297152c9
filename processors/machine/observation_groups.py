"""Observation groups: each cycle's notes wrapped with their provenance when retrieval is on (§8.4).

``<observation-group id="<16 hex>" range="<firstId>:<lastId>">`` tells the agent (and recall) which
raw messages a block of notes came from, so it can fetch them again. Ids are derived from the cycle
id, so a replay rebuilds the same groups and re-indexing them is idempotent.
"""

from __future__ import annotations

import hashlib

from processors.recall.groups import parse_observation_groups
from schemas.messages import ChatMessage


def group_id(cycle_id: str) -> str:
    return hashlib.sha256(cycle_id.encode()).hexdigest()[:16]


def wrap_group(text: str, cycle_id: str, message_range: str, kind: str | None = None) -> str:
    extra = f' kind="{kind}"' if kind else ""
    return f'<observation-group id="{group_id(cycle_id)}" range="{message_range}"{extra}>\n{text.strip()}\n</observation-group>'


def message_range(messages: list[ChatMessage]) -> str | None:
    """``"<first id>:<last id>"`` in time order — the provenance of an observation group."""
    if not messages:
        return None
    ordered = sorted(messages, key=lambda m: m.created_at)
    return f"{ordered[0].id}:{ordered[-1].id}"


def spanning_range(text: str) -> str:
    """The range a reflection of ``text`` covers: first group's start to last group's end."""
    ranges = [g.range for g in parse_observation_groups(text) if ":" in g.range]
    if not ranges:
        return ":"
    return f"{ranges[0].split(':', 1)[0]}:{ranges[-1].rsplit(':', 1)[1]}"
