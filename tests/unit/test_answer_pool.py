"""streams/llm/deterministic/answer_pool.py: the offline model answered in child processes gives the
in-thread answers, a child that dies fails only its call, and a child never outlives its worker."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from streams.llm.deterministic import offline
from streams.llm.deterministic.answer_pool import AnswerPool, OfflineModelError

HISTORY = """## New Message History to Observe
Nov 26 2026:
User (9:02 AM): Hi! I'm Maya. We booked the Memmo hotel, confirmation MPR-1.
Assistant (9:03 AM): Wonderful! Enjoy your stay. Want me to plan the days?
User (9:05 AM): Thanks! I'm allergic to peanuts. Can you find a vegan place for next Tuesday?"""
LOG = "Date: Nov 26, 2026\n* 🔴 (09:02) User is Maya\n* 🔴 (09:05) User is allergic to peanuts"
CALLS = [
    ("observer", [{"role": "system", "content": "<current-task>\n…\n</current-task>"},
                  {"role": "user", "content": HISTORY}], None),
    ("echo", [{"role": "system", "content": "x"}, {"role": "user", "content": "task"},
              {"role": "user", "content": HISTORY}], None),
    ("reflector", [{"role": "system", "content": "compress"},
                   {"role": "user", "content": f"## OBSERVATIONS TO REFLECT ON\n{LOG}"}], None),
    ("observer", [{"role": "user", "content": HISTORY}],
     {"type": "json_schema", "json_schema": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}}),
]


def _deadline(condition, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waits only for its parent's wait
        return stat.read().split(") ")[-1][0] != "Z"


@pytest.fixture
def pool():
    answers = AnswerPool(2)
    yield answers
    answers.close()


def test_children_answer_as_the_worker_would(pool: AnswerPool) -> None:
    expected = [offline.answer(*call) for call in CALLS]
    with ThreadPoolExecutor(4) as threads:  # more callers than children: they wait for one
        got = list(threads.map(lambda call: pool.answer(*call), CALLS * 3))
    assert got == expected * 3
    assert 1 <= len(pool.pids) <= 2 and os.getpid() not in pool.pids


def test_a_child_that_dies_fails_its_call_as_a_dropped_connection_and_the_next_call_starts_another(
        pool: AnswerPool) -> None:
    first = pool.answer(*CALLS[0])
    [pid] = pool.pids
    os.kill(pid, signal.SIGKILL)
    assert _deadline(lambda: not _alive(pid) or pid not in pool.pids)
    with pytest.raises(ConnectionError, match="process ended"):
        pool.answer(*CALLS[0])
    assert pool.pids == []
    assert pool.answer(*CALLS[0]) == first
    assert len(pool.pids) == 1 and pool.pids != [pid]


def test_a_failing_answer_names_the_exception_not_the_prompt(pool: AnswerPool) -> None:
    for _ in range(3):
        with pytest.raises(OfflineModelError) as raised:
            pool.answer("observer", [{"role": "user", "content": "my secret"}], {"type": "json_schema"})
        assert "secret" not in str(raised.value) and "failed" in str(raised.value)
    [pid] = pool.pids  # the one child answered each failure and lives on: none leaked, none started again
    assert pool.answer(*CALLS[1]) == offline.answer(*CALLS[1]) and pool.pids == [pid]


def test_a_closed_pool_refuses_calls_as_a_dropped_connection(pool: AnswerPool) -> None:
    pool.answer(*CALLS[1])
    [pid] = pool.pids
    pool.close()
    assert _deadline(lambda: not _alive(pid))
    with pytest.raises(ConnectionError, match="closed"):
        pool.answer(*CALLS[1])


def test_a_child_ends_with_its_worker_even_after_a_kill_9() -> None:
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys
        from streams.llm.deterministic.answer_pool import AnswerPool
        pool = AnswerPool(1)
        pool.answer("echo", [{"role": "user", "content": "hi"}], None)
        print(pool.pids[0], flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        child = int(worker.stdout.readline())
        assert _alive(child)
        worker.kill()
        worker.wait()
        assert _deadline(lambda: not _alive(child)), "the offline model's process outlived its worker"
    finally:
        worker.kill()
        worker.wait()


async def test_the_client_uses_the_children_once_a_worker_asks_for_them() -> None:
    from streams.llm.client import LiteLLMClient
    from streams.llm.retry import RetryPolicy
    from processors.model_port import ModelCall

    async def no_sleep(_: float) -> None:
        return None

    client = LiteLLMClient(RetryPolicy(max_retries=0), sleep=no_sleep)
    call = ModelCall(role="observer", model="om-deterministic/observer", messages=CALLS[0][1])
    in_thread = (await client.complete(call)).text
    offline.answer_in_processes(1)
    try:
        assert (await client.complete(call)).text == in_thread
        assert len(offline._POOL.pids) == 1  # type: ignore[union-attr]
    finally:
        offline.answer_in_processes(0)
    assert offline._POOL is None
    await asyncio.sleep(0)


def test_a_restart_in_place_ends_the_children_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exec keeps the pid, and the new program would never reap the old children."""
    from streams import restart

    offline.answer_in_processes(1)
    pool = offline._POOL
    assert pool is not None and pool.answer(*CALLS[1])
    [pid] = pool.pids
    execs: list[tuple] = []
    monkeypatch.setattr(restart.os, "execve", lambda *args: execs.append(args))
    restart.restart_in_place("test.restart")
    assert execs and offline._POOL is None
    assert not _alive(pid), "the child outlived the exec"


def test_a_pool_not_warmed_starts_its_first_child_at_the_first_call() -> None:
    """A worker whose configured models are a provider's (streams/worker.py) starts no child unless an
    offline call comes."""
    offline.answer_in_processes(1, warm=False)
    try:
        assert offline._POOL is not None and offline._POOL.pids == []
        assert offline._POOL.answer(*CALLS[1]) == offline.answer(*CALLS[1]) and len(offline._POOL.pids) == 1
    finally:
        offline.answer_in_processes(0)


def test_the_worker_warms_the_pool_only_for_offline_models() -> None:
    from processors.config import OMConfig
    from streams.llm.endpoints import configured_models
    from streams.llm.models import is_offline

    offline_config = OMConfig.from_mastra({"model": "om-deterministic/observer"})
    provider_config = OMConfig.from_mastra({"model": "google/gemini-2.5-flash"})
    assert any(is_offline(model) for _, model in configured_models(offline_config))
    assert not any(is_offline(model) for _, model in configured_models(provider_config))
