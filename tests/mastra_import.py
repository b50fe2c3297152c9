"""Checking an imported Mastra store against what Mastra itself showed its actor (issue 22).

The fixtures in tests/fixtures/mastra_store were written by real Mastra (make_store.mjs); each
``<name>.expected.json`` holds the system prompt and conversation Mastra sent its actor on the turn
after the store was written. After an import, the reader's observation text must be Mastra's (from
its ``<observations>`` on, up to the relative-date notes, which depend on "now"), and no Observer or
Reflector work may start: ``LLM_WORK`` are the lifecycle events that announce such a call.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import orjson

from processors.context import OBSERVATIONS_OPEN
from schemas.messages import ChatMessage
from streams.reader.models import ContextResponse
from streams.replay.mastra_om import ImportTally
from streams.sdk import OMClient
from streams.sdk.events import EventStream

FIXTURES = Path(__file__).parent / "fixtures" / "mastra_store"
LLM_WORK = ["observation-start", "buffering-start"]  # observation-start also announces a reflection
DEADLINE_S = 30.0
_DATE_LINE = re.compile(r"^(Date: \w+ \d+, \d{4}) \([^)]*\)$", re.MULTILINE)


def expected(name: str) -> dict[str, Any]:
    return orjson.loads((FIXTURES / f"{name}.expected.json").read_bytes())


def without_relative_dates(text: str) -> str:
    """Mastra rendered 'today' on its virtual clock; the reader renders the real now."""
    return _DATE_LINE.sub(r"\1", text)


def newest_imported_message(source: Any) -> ChatMessage:
    """The newest message the source's OM import carries (the last one the record folds)."""
    messages = [m for part in source.imports(ImportTally()) for m in part.observed + part.unobserved]
    return max(messages, key=lambda m: (m.created_at, m.id))


async def imported_context(client: OMClient, thread_id: str, resource_id: str, newest: ChatMessage) -> ContextResponse:
    """The thread's context once the reader serves the imported observations (bounded wait)."""
    await client.context(newest.thread_id, resource_id, wait_for_message_id=newest.id, timeout=DEADLINE_S)
    # the folded message's status event can land before the record snapshot it came with (the sink
    # reads the topics separately): wait, with a deadline, until the imported observations are served
    deadline = time.monotonic() + DEADLINE_S
    while True:
        context = await client.context(thread_id, resource_id)
        if OBSERVATIONS_OPEN in context.system:
            return context
        assert time.monotonic() < deadline, f"the imported observations were not served within {DEADLINE_S} s"
        await asyncio.sleep(0.05)


def observation_text(context: ContextResponse) -> str:
    """Our system messages from the observations on, without the working-memory block."""
    system = context.system[context.system.index(OBSERVATIONS_OPEN):]
    return without_relative_dates("\n".join(s for s in system if not s.startswith("<working-memory>")))


def mastras_observation_text(fixture: dict[str, Any]) -> str:
    prompt = fixture["actorSystemPrompt"]
    return without_relative_dates(prompt[prompt.index("<observations>"):])


def mastras_conversation(fixture: dict[str, Any]) -> list[str]:
    """The texts of the stored messages Mastra sent its actor (not its reminders, state blocks or the probe)."""
    return [m["text"] for m in fixture["actorConversation"]
            if not m["text"].startswith(("<system-reminder>", "<working-memory", "Turn 0 from the user"))]


def texts(context: ContextResponse) -> list[str]:
    return ["".join(getattr(p, "text", "") for p in m.parts) for m in context.messages]


async def assert_no_llm_work(work: EventStream) -> None:
    """No Observer or Reflector work was announced: ``work`` reads every event committed so far (up to
    the end offsets its read_committed consumer sees, the last stable offsets) and none matches.

    An Observer/Reflector job caused by the import is committed in the same transaction as the record
    the reader serves, so once the context shows the import such an event is below those offsets.
    (This waited for a first event for 2 s instead: a negative check that always took its whole
    window, while reading up to the offsets takes one or two polls.)"""
    await work.start()
    consumer = work._consumer
    assert consumer is not None
    ends = await consumer.end_offsets(sorted(consumer.assignment()))
    deadline = time.monotonic() + DEADLINE_S
    while True:
        found = await work.next_batch()
        if found:
            raise AssertionError(f"the import started LLM work: {found[0].type} for {found[0].thread_id}")
        positions = {tp: await consumer.position(tp) for tp in ends}
        if all(positions[tp] >= end for tp, end in ends.items()):
            return
        assert time.monotonic() < deadline, f"the events up to {ends} were not read within {DEADLINE_S} s"
