"""Resource scope: the multi-thread Observer calls are batched by ``max_tokens_per_batch`` (spec §4.9)."""

from __future__ import annotations

import asyncio
import re

from processors.model_port import ModelCall, ModelCallError, ModelReply, Usage
from processors.observer.batches import thread_batches
from processors.observer.calls import count_input
from processors.observer.runner import run_observer
from processors.observer.types import ObserverMode, ObserverRequest, ObserverSettings, ThreadInput
from processors.tokens import get_counter
from schemas.messages import ChatMessage

COUNTER = get_counter()
T0 = 1733333580000
_SECTION = re.compile(r'<thread id="([^"]+)">')


def _thread(tid: str, words: int, oldest_at: int) -> ThreadInput:
    text = " ".join(f"{tid}word{i}" for i in range(words))
    return ThreadInput(thread_id=tid, messages=[
        ChatMessage(id=f"{tid}-1", thread_id=tid, role="user", created_at=oldest_at, parts=[{"type": "text", "text": text}]),
        ChatMessage(id=f"{tid}-2", thread_id=tid, role="assistant", created_at=oldest_at + 1000,
                    parts=[{"type": "text", "text": "noted"}]),
    ])


class Barrier:
    """Answers each call only once ``expected`` calls are in flight together (a deadline, no sleeps)."""

    def __init__(self, expected: int) -> None:
        self.expected, self.calls = expected, []
        self.all_in = asyncio.Event()

    async def complete(self, call: ModelCall) -> ModelReply:
        self.calls.append(call)
        if len(self.calls) >= self.expected:
            self.all_in.set()
        await asyncio.wait_for(self.all_in.wait(), timeout=5)
        ids = _SECTION.findall("\n".join(p["text"] for p in call.messages[2]["content"] if p["type"] == "text"))
        body = "\n".join(f'<thread id="{t}">\nDate: Dec 4, 2024\n* 🔴 (17:33) notes of {t}\n</thread>' for t in ids)
        return ModelReply(text=f"<observations>\n{body}\n</observations>", usage=Usage(input_tokens=10, output_tokens=5))


def _threads() -> list[ThreadInput]:
    # given newest-first, so the order by oldest message is a, b, c, d
    return [_thread("d", 60, T0 + 4000), _thread("c", 900, T0 + 3000), _thread("b", 100, T0 + 2000),
            _thread("a", 100, T0 + 1000)]


def test_threads_packed_in_order_of_their_oldest_message_never_split():
    threads = _threads()
    size = {t.thread_id: count_input(COUNTER, t.messages) for t in threads}
    limit = size["a"] + size["b"]
    assert size["c"] > limit and size["c"] + size["d"] > limit
    batches = thread_batches(threads, COUNTER, limit)
    assert [[t.thread_id for t in batch] for batch in batches] == [["a", "b"], ["c"], ["d"]]
    assert [[t.thread_id for t in batch] for batch in thread_batches(threads, COUNTER, 10**9)] == [["a", "b", "c", "d"]]


async def test_each_batch_is_its_own_call_all_in_parallel_one_section_per_thread_back():
    threads = _threads()
    limit = count_input(COUNTER, threads[3].messages) + count_input(COUNTER, threads[2].messages)
    model = Barrier(expected=3)
    request = ObserverRequest(mode=ObserverMode.MULTI_THREAD, threads=threads,
                              settings=ObserverSettings(model="openai/gpt-4o", max_tokens_per_batch=limit))
    outcome = await run_observer(request, model, COUNTER)
    assert outcome.error is None
    sent = ["\n".join(p["text"] for p in c.messages[2]["content"] if p["type"] == "text") for c in model.calls]
    assert sorted(_SECTION.findall(s) for s in sent) == [["a", "b"], ["c"], ["d"]]
    assert list(outcome.threads) == ["a", "b", "c", "d"]
    assert all(outcome.threads[t].observations.endswith(f"notes of {t}") for t in "abcd")
    assert outcome.usage.input_tokens == 30 and outcome.attempts == 3


async def test_a_failed_batch_fails_the_cycle():
    class ThreadAFails(Barrier):
        async def complete(self, call: ModelCall) -> ModelReply:
            reply = await super().complete(call)
            if '<thread id="a">' in str(call.messages[2]["content"]):
                raise ModelCallError("503 unavailable", transient=True, attempts=3)
            return reply

    threads = _threads()[2:]  # b and a
    request = ObserverRequest(mode=ObserverMode.MULTI_THREAD, threads=threads,
                              settings=ObserverSettings(model="openai/gpt-4o", max_tokens_per_batch=1))
    outcome = await run_observer(request, ThreadAFails(expected=2), COUNTER)
    assert outcome.error == "503 unavailable" and outcome.threads == {} and outcome.attempts == 4
