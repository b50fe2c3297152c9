"""Issue 18 item 9: the reader's budgets refuse at once (a 429), per token and in all, and give every slot back."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import REGISTRY

from streams.reader.admission import Admission, Limits, Pool, Refused
from streams.reader.http import create_app


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def refusal(pool: Pool, token: str) -> tuple[str, int]:
    with pytest.raises(Refused) as refused, pool.admit(token):
        pass
    return refused.value.reason, refused.value.retry_after


def test_a_token_over_its_share_is_refused_while_others_are_admitted() -> None:
    pool = Pool(Limits(concurrency=3, per_token=1))
    with pool.admit("flood"):
        assert refusal(pool, "flood") == ("token-busy", 1)
        with pool.admit("calm"):
            assert pool.in_flight == 2
    with pool.admit("flood"):
        assert pool.in_flight == 1, "the slot came back"


def test_a_full_budget_refuses_every_token_and_a_failed_call_gives_its_slot_back() -> None:
    pool = Pool(Limits(concurrency=2, per_token=2))
    with pool.admit("a"), pool.admit("b"):
        assert refusal(pool, "c") == ("busy", 1)
    with pytest.raises(RuntimeError), pool.admit("a"):
        raise RuntimeError("the call failed")
    assert pool.in_flight == 0
    with pool.admit("a"), pool.admit("a"):
        assert refusal(pool, "a") == ("token-busy", 1)


def test_the_rate_allows_a_burst_then_refills_per_token() -> None:
    clock = Clock()
    pool = Pool(Limits(concurrency=10, per_token=10, rate=2.0, burst=3), clock)
    for _ in range(3):
        with pool.admit("flood"):
            pass
    assert refusal(pool, "flood") == ("token-rate", 1)
    with pool.admit("calm"):
        pass  # another token's bucket is full
    clock.now += 0.5  # one call's worth at 2 a second
    with pool.admit("flood"):
        pass
    assert refusal(pool, "flood")[0] == "token-rate"
    clock.now += 60
    for _ in range(3):
        with pool.admit("flood"):
            pass
    assert refusal(pool, "flood")[0] == "token-rate", "a quiet spell refills to the burst, not beyond"


def test_a_slow_rate_asks_for_a_longer_wait_and_refusals_for_concurrency_spend_no_rate() -> None:
    clock = Clock()
    pool = Pool(Limits(concurrency=1, per_token=1, rate=0.25, burst=1), clock)
    with pool.admit("a"):
        for _ in range(5):
            assert refusal(pool, "a") == ("token-busy", 1)
    assert refusal(pool, "a") == ("token-rate", 4)
    clock.now += 4
    with pool.admit("a"):
        pass


class _Reader:
    """Status calls wait until released, so a test can hold read slots."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.waiting = 0

    async def status(self, thread_id: str, resource_id: str) -> None:
        self.waiting += 1
        await self.release.wait()


async def test_a_token_over_its_read_share_gets_a_429_with_retry_after_and_others_still_read() -> None:
    reader = _Reader()
    admission = Admission(Limits(concurrency=3, per_token=1), Limits(concurrency=1, per_token=1))
    app = create_app(reader, {"flood": ["r1"], "calm": ["r2"]}, admission=admission)  # type: ignore[arg-type]
    route = "/v1/threads/{thread_id}/status"
    before = REGISTRY.get_sample_value("om_reader_refused_total", {"route": route, "reason": "token-busy"}) or 0.0
    async with TestClient(TestServer(app)) as client:
        held = asyncio.ensure_future(client.get("/v1/threads/t/status", headers={"Authorization": "Bearer flood"}))
        deadline = time.monotonic() + 5
        while reader.waiting < 1:
            assert time.monotonic() < deadline, "the first call never started"
            await asyncio.sleep(0.01)
        refused = await client.get("/v1/threads/t/status", headers={"Authorization": "Bearer flood"})
        assert refused.status == 429 and refused.headers["Retry-After"] == "1"
        assert "retry in 1 s" in (await refused.json())["error"]
        calm = asyncio.ensure_future(client.get("/v1/threads/t/status", headers={"Authorization": "Bearer calm"}))
        while reader.waiting < 2:
            assert time.monotonic() < deadline, "the other token's call was not admitted"
            await asyncio.sleep(0.01)
        reader.release.set()
        assert (await held).status == 200 and (await calm).status == 200
        again = await client.get("/v1/threads/t/status", headers={"Authorization": "Bearer flood"})
        assert again.status == 200, "the slot came back"
    after = REGISTRY.get_sample_value("om_reader_refused_total", {"route": route, "reason": "token-busy"})
    assert after == before + 1
