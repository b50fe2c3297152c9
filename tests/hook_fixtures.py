"""Transform hooks used by the tests, named by import path like an operator's own (``OM_HOOKS``).

They act by thread id so one worker can exercise every behaviour: ``drop-*`` threads lose all
their messages, ``fail-*`` threads make the hook raise, other threads pass through (``None``).
"""

from __future__ import annotations

import asyncio

from schemas.jobs import ObserveJob, ReflectJob
from schemas.messages import ChatMessage

AFTER_MARK = "(checked by after_observation)"


async def drop_or_fail(messages: list[ChatMessage], job: ObserveJob) -> list[ChatMessage] | None:
    await asyncio.sleep(0)  # a real await: hooks are always awaited
    threads = {m.thread_id for m in messages}
    if any(t.startswith("fail-") for t in threads):
        raise RuntimeError(f"refusing {sorted(threads)}")  # the text must not reach the failed event
    if any(t.startswith("drop-") for t in threads):
        return []
    return None


def mark_observations(text: str, job: ObserveJob) -> str:
    return f"{text}\n{AFTER_MARK}"


def shout_reflection_input(text: str, job: ReflectJob) -> str:
    return text.upper()


def not_a_string(text: str, job: ReflectJob) -> int:
    return 42
