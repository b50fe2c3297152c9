"""Issue 23 item 4 through a real worker (embedded default): a resource over its daily token budget
gets no new cycle, keeps getting its context, and resumes when the budget allows.

The sink sums the resource's model tokens from the cost ledger and tells the resource's keys
(streams/sink/budget.py); the keys follow (processors/machine/budget.py). "Allows again" is shown
as an operator would do it: the worker restarted with a larger budget, whose first sweep lifts the
pause — the day rolling over takes the same path (the sweep compares today's spending).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import aiohttp
import orjson
import pytest

from schemas.messages import ChatMessage
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration
TOKEN = "budget-test-token"
OBSERVATION = {"messageTokens": 300, "bufferTokens": False}


def _messages(prefix: str, start: int, count: int) -> list[ChatMessage]:
    filler = " ".join(f"fact{i} about the trip" for i in range(40))
    return [ChatMessage(id=f"{prefix}{i}", thread_id="ta", resource_id="ra", role="user", created_at=start + i * 1000,
                        parts=[{"type": "text", "text": f"{prefix} turn {i}: {filler}"}]) for i in range(count)]


def _started(log: EventLog) -> int:
    return log.count("thread:ta", "observation-start")


def _applied(log: EventLog, message_id: str) -> bool:
    return any(getattr(e, "applied_through", None) is not None and e.applied_through.message_id == message_id
               for e in log.by_key["thread:ta"])


async def test_over_budget_no_cycle_starts_the_context_keeps_the_messages_and_a_larger_budget_resumes(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    worker = WorkerProcess(kafka_bootstrap, f"b{uuid.uuid4().hex[:8]}",
                           {"observation": OBSERVATION, "dailyTokenBudget": 1}, tmp_path, partitions=1,
                           extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: ["ra"]}).decode()})
    handle = worker.start()
    reader = f"http://127.0.0.1:{handle.env['OM_READER_PORT']}"
    wait_http(f"{reader}/healthz", handle.proc, handle.log)
    try:
        topics = Topics.for_prefix(worker.prefix)
        now = int(time.time() * 1000) - 120_000
        async with EventLog(kafka_bootstrap, topics.events) as log:
            await produce(kafka_bootstrap, topics.messages, [("thread:ta", m.to_bytes()) for m in _messages("a", now, 4)])
            await wait_until(lambda: log.count("thread:ta", "budget-exceeded") == 1, 90,
                             "the first cycle's tokens never paused the thread")
            (exceeded,) = [e for e in log.by_key["thread:ta"] if e.type == "budget-exceeded"]
            assert exceeded.limit_tokens == 1 and exceeded.used_tokens > 1
            started = _started(log)  # final: the key's events are in its log order, the pause among them

            later = _messages("b", now + 60_000, 6)  # twice the threshold
            await produce(kafka_bootstrap, topics.messages, [("thread:ta", m.to_bytes()) for m in later])
            await wait_until(lambda: _applied(log, later[-1].id), 60, "the later messages were never folded")
            assert _started(log) == started, "a cycle started over budget"
            async with aiohttp.ClientSession() as session, session.get(
                    f"{reader}/v1/threads/ta/context?resource_id=ra&wait_for_message_id={later[-1].id}&timeout=30",
                    headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                text = await response.text()
            assert response.status == 200 and all(f"b turn {i}:" in text for i in range(6)), "context lost messages"

            worker.kill()
            worker.config = {"observation": OBSERVATION, "dailyTokenBudget": 1_000_000_000}
            worker.env()  # rewrites the config file the restarted worker reads
            worker.restart_killed()
            await wait_until(lambda: log.count("thread:ta", "budget-restored") == 1, 90,
                             "the larger budget never lifted the pause")
            await wait_until(lambda: _started(log) > started, 60, "what waited never started")
            await wait_until(lambda: log.count("thread:ta", "observation-end") >= 2, 60,
                             "the waiting messages were never observed")
    finally:
        worker.stop()
