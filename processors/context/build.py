"""What the agent receives: observations, continuation hint, unobserved messages (spec §7).

Pure: the reader gathers a record, its per-thread metadata and the unobserved messages (from
ClickHouse), then calls :func:`build_context`. Observation text is split at message boundaries into
one system message per cycle, so earlier cycles stay byte-identical from turn to turn and the
provider's prompt cache keeps hitting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from processors.context.prompts import (
    CONTINUATION_HINT,
    CONTINUATION_ID,
    OBSERVATIONS_OPEN,
    OBSERVATIONS_PREAMBLE,
)
from processors.recall.groups import render_groups_for_context
from processors.context.text import add_relative_time_to_observations, optimize_observations_for_context
from schemas.messages import ChatMessage, TextPart
from schemas.record import BOUNDARY_PREFIX, BOUNDARY_SUFFIX, ThreadMeta

BUILT_IN_SLUGS = ("current-task", "suggested-response", "thread-title")


@dataclass(frozen=True)
class AgentContext:
    system: list[str] = field(default_factory=list)
    continuation: ChatMessage | None = None
    messages: list[ChatMessage] = field(default_factory=list)
    observed_through: int | None = None  # the record's cursor: messages up to it are in the observations

    def as_chat(self) -> list[dict[str, Any]]:
        """OpenAI-style ``{role, content}`` list, in the order the agent should send it."""
        chat: list[dict[str, Any]] = [{"role": "system", "content": s} for s in self.system]
        chat.extend(chat_turn(message) for message in self.conversation())
        return chat

    def conversation(self) -> list[ChatMessage]:
        """The continuation reminder (if any), then the unobserved messages: the chat after the system turns."""
        return ([self.continuation] if self.continuation else []) + self.messages


def chat_turn(message: ChatMessage) -> dict[str, Any]:
    """A message as one OpenAI-style turn: its text parts joined, a temporal-gap signal as the user's."""
    text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
    return {"role": "user" if message.role == "signal" else message.role, "content": text}


def split_observations(text: str) -> list[str]:
    """One piece per observation cycle, cut at Mastra's ``--- message boundary (…) ---`` lines."""
    pieces: list[str] = []
    rest = text
    while True:
        start = rest.find(BOUNDARY_PREFIX)
        if start < 0:
            break
        end = rest.find(BOUNDARY_SUFFIX, start + len(BOUNDARY_PREFIX))
        if end < 0:
            break
        pieces.append(rest[:start])
        rest = rest[end + len(BOUNDARY_SUFFIX):]
    pieces.append(rest)
    return [p.strip() for p in pieces if p.strip()]


def build_context(
    active_observations: str,
    unobserved: Sequence[ChatMessage],
    now_ms: int,
    *,
    meta: ThreadMeta | None = None,
    continuation_hints: bool = True,
    extracted_slugs: Sequence[str] = (),
    retrieval_instructions: str | None = None,
    timezone: str = "UTC",
    working_memory: str | None = None,
    other_conversations: str = "",
    shown_observations: str | None = None,
) -> AgentContext:
    """Assemble the context; ``extracted_slugs`` names custom extractors whose values are shown;
    ``working_memory`` is the Observer-managed state block, delivered after everything else;
    ``other_conversations`` (resource scope, :mod:`processors.context.other_conversations`) goes between
    the preamble and the observations, and like them only once there are observations.
    ``shown_observations``: :func:`observations_for_actor` of these arguments, when the caller keeps
    it (a reader serving one record many times a day); computed here otherwise. Of the messages it
    reads ``created_at`` (the order) and the first one's ``thread_id`` only: the reader's lean body
    passes stand-ins for the row's stored entries (streams/reader/api.py ``_Stamp``)."""
    messages = sorted(unobserved, key=lambda m: m.created_at)
    state = [f"<working-memory>\n{working_memory}\n</working-memory>"] if working_memory else []
    if not active_observations.strip():
        system = [retrieval_instructions] if retrieval_instructions else []
        return AgentContext(system=system + state, messages=messages)
    preamble = OBSERVATIONS_PREAMBLE
    if retrieval_instructions:
        preamble = f"{preamble}\n\n{retrieval_instructions}"
    text = shown_observations if shown_observations is not None else observations_for_actor(
        active_observations, now_ms, timezone, grouped=bool(retrieval_instructions))
    system = [preamble, *([other_conversations] if other_conversations else []), OBSERVATIONS_OPEN,
              *split_observations(text)]
    if meta is not None:
        system.extend(_metadata_blocks(meta, continuation_hints, extracted_slugs))
    system.extend(state)  # last: a new working memory never changes the cached observation prefix
    continuation = ChatMessage(
        id=CONTINUATION_ID,
        thread_id=messages[0].thread_id if messages else "om",
        role="user",
        created_at=0,
        parts=[TextPart(text=f"<system-reminder>{CONTINUATION_HINT}</system-reminder>")],
    )
    return AgentContext(system=system, continuation=continuation, messages=messages)


def observations_for_actor(active_observations: str, now_ms: int, timezone: str, *, grouped: bool) -> str:
    """The observation log as the actor reads it: leaner (or grouped for recall, ``grouped``) and
    annotated with how long ago each date was. It reads ``now_ms`` only through
    :func:`~processors.context.dates.day_key`, so within one such key it is the same text."""
    regrouped = render_groups_for_context(active_observations) if grouped else None
    text = regrouped if regrouped is not None else optimize_observations_for_context(active_observations)
    return add_relative_time_to_observations(text, now_ms, timezone)


def _metadata_blocks(meta: ThreadMeta, hints: bool, slugs: Sequence[str]) -> list[str]:
    blocks: list[str] = []
    if hints and meta.current_task:
        blocks.append(f"<current-task>\n{meta.current_task}\n</current-task>")
    if hints and meta.suggested_response:
        blocks.append(f"<suggested-response>\n{meta.suggested_response}\n</suggested-response>")
    for slug in slugs:
        value = meta.extracted.get(slug)
        if slug not in BUILT_IN_SLUGS and value not in (None, ""):
            blocks.append(f"<{slug}>\n{value}\n</{slug}>")
    return blocks
