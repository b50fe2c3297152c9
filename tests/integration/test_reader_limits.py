"""Issue 18 item 9: one tenant cannot starve the others, and slow or idle connections cannot pile up.

Against the real reader (``start_reader``: its guarded listener and its budgets) on the session's
engine, with rows written as the sink writes them (no broker). Timeouts and the cap are set small
through the settings so each test takes a few seconds.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
from clickhouse_connect.driver.client import Client
from prometheus_client import REGISTRY

from processors.config import OMConfig
from processors.machine import event_key
from streams.reader import Reader
from streams.reader.serve import start_reader
from streams.settings import Settings
from streams.sink.rows import message_rows
from streams.sink.writer import write_batch
from tests.integration.om_pipeline import (
    REFLECTIVE,
    Conversation,
    database_client,
    store_rows,
)
from tests.unit.machine.core_driver import MINUTE, T0, message

pytestmark = pytest.mark.integration
TOKENS = {"flood-token": ["r-flood"], "calm-token": ["r-calm"]}
FLOOD = {"Authorization": "Bearer flood-token"}
CALM = {"Authorization": "Bearer calm-token"}
SCAN_S = 0.5  # what one recall costs here, as a scan of a large resource's messages would
READABLE_WITHIN_S = 1.0


@dataclass
class Served:
    base: str
    host: str
    port: int
    client: Client
    config: OMConfig


@contextlib.asynccontextmanager
async def serving(clickhouse_dsn: str, **limits: float) -> AsyncIterator[Served]:
    config = OMConfig.model_validate(REFLECTIVE)
    talk = Conversation(config)
    talk.talk(60, thread="flooded", resource="r-flood")
    talk.talk(5, thread="calm", resource="r-calm")
    client = database_client(clickhouse_dsn)
    store_rows(client, talk)
    settings = Settings(clickhouse_dsn=clickhouse_dsn, reader_port=0, reader_tokens=TOKENS, **limits)
    runner = await start_reader(client, settings, config)
    host, port = runner.addresses[0][:2]
    try:
        yield Served(f"http://{host}:{port}", host, port, client, config)
    finally:
        await runner.cleanup()


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def cuts(reason: str) -> float:
    return sample("om_reader_connections_cut_total", reason=reason)


async def until(condition, deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


async def readable_after(session: aiohttp.ClientSession, served: Served, n: int) -> float:
    """Seconds from the sink-like insert of a new message of ``calm`` until its context lists it."""
    new = message(f"calm-new-{n}", T0 + (100 + n) * MINUTE, thread="calm", resource="r-calm")
    rows = [message_rows(event_key(new, served.config), new.to_bytes(), 1000 + n)]
    started = time.monotonic()
    await asyncio.to_thread(write_batch, served.client, rows)  # where the sink's inserts run
    while True:
        async with session.get(f"{served.base}/v1/threads/calm/context", headers=CALM) as response:
            assert response.status == 200, await response.text()
            if new.id in [m["id"] for m in (await response.json())["messages"]]:
                return time.monotonic() - started
        assert time.monotonic() - started < 15, "the new message never became readable"
        await asyncio.sleep(0.01)  # the poll interval


async def test_a_recall_flood_from_one_token_neither_delays_another_tokens_reads_nor_its_own_share(
        clickhouse_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scan = Reader.recall

    def slow_recall(self: Reader, resource_id: str, request: dict) -> dict:
        time.sleep(SCAN_S)
        return scan(self, resource_id, request)

    monkeypatch.setattr(Reader, "recall", slow_recall)
    tally: collections.Counter[int] = collections.Counter()
    stop = asyncio.Event()

    async def flood(session: aiohttp.ClientSession, base: str) -> None:
        while not stop.is_set():
            async with session.post(f"{base}/v1/recall", json={"mode": "threads"}, headers=FLOOD) as response:
                body = await response.json()
                tally[response.status] += 1
                if response.status == 429:
                    assert int(response.headers["Retry-After"]) >= 1 and "retry in" in body["error"]
            await asyncio.sleep(0.05)  # each flooder's pace: 30 of them send hundreds a second

    async with serving(clickhouse_dsn) as served, aiohttp.ClientSession() as session:
        quiet = await readable_after(session, served, 0)
        flooders = [asyncio.create_task(flood(session, served.base)) for _ in range(30)]
        try:
            await until(lambda: tally[429] >= 30, 10, "the flood was never refused")
            delays = [await readable_after(session, served, n) for n in (1, 2, 3)]
            async with session.post(f"{served.base}/v1/recall", json={"mode": "threads"}, headers=CALM) as own:
                assert own.status == 200, "the calm token's recall has its own share"
        finally:
            stop.set()
            await asyncio.gather(*flooders)
    assert max(delays) < READABLE_WITHIN_S, (quiet, delays)
    assert tally[200] >= 1 and tally[429] > 10 * tally[200], dict(tally)
    assert set(tally) == {200, 429}, dict(tally)
    assert sample("om_reader_refused_total", route="/v1/recall", reason="token-busy") >= 30


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sent until it closed the connection (a reset counts as closed)."""
    received = b""
    async with asyncio.timeout(seconds):
        with contextlib.suppress(ConnectionResetError):
            while chunk := await reader.read(4096):
                received += chunk
    return received


async def test_slow_and_silent_connections_are_cut_while_a_normal_request_is_served(clickhouse_dsn: str) -> None:
    timeout_s = 1.5
    async with serving(clickhouse_dsn, reader_header_timeout_s=timeout_s, reader_idle_timeout_s=timeout_s,
                       reader_body_timeout_s=timeout_s) as served:
        before = {reason: cuts(reason) for reason in ("slow-head", "slow-body", "idle")}
        opened = sample("om_reader_connections_open")
        silent = [await asyncio.open_connection(served.host, served.port) for _ in range(20)]
        partial = [await asyncio.open_connection(served.host, served.port) for _ in range(20)]
        for _, writer in partial:
            writer.write(b"GET /v1/threads/calm/context HTTP/1.1\r\nHost: reader\r\nAuthorization: Bearer calm")
        slow_body = [await asyncio.open_connection(served.host, served.port) for _ in range(5)]
        for _, writer in slow_body:
            writer.write(b"POST /v1/recall HTTP/1.1\r\nHost: reader\r\nAuthorization: Bearer calm-token\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mode\":")
        kept_alive = await asyncio.open_connection(served.host, served.port)
        kept_alive[1].write(b"GET /healthz HTTP/1.1\r\nHost: reader\r\n\r\n")
        assert (await kept_alive[0].readuntil(b'{"ok":true}')).startswith(b"HTTP/1.1 200")
        held = 20 + 20 + 5 + 1
        await until(lambda: sample("om_reader_connections_open") >= opened + held, 2, "connections not open")

        async with aiohttp.ClientSession() as session, \
                session.get(f"{served.base}/v1/threads/calm/context", headers=CALM) as response:
            assert response.status == 200
        assert sample("om_reader_connections_open") >= opened + held, "served while they were all held"

        for reader, _ in silent + partial + [kept_alive]:
            assert await closed_within(reader, timeout_s + 3) == b"", "cut without an answer"
        for reader, _ in slow_body:
            answer = await closed_within(reader, 2 * timeout_s + 3)
            assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within" in answer
        for _, writer in silent + partial + slow_body + [kept_alive]:
            writer.close()
        await until(lambda: sample("om_reader_connections_open") <= opened, 2, "connections still counted")
    assert cuts("slow-head") - before["slow-head"] == 40
    assert cuts("slow-body") - before["slow-body"] == 5
    assert cuts("idle") - before["idle"] == 1


async def test_connections_over_the_cap_are_refused_at_once_and_the_listener_keeps_serving(
        clickhouse_dsn: str) -> None:
    cap, extra, header_s = 4, 3, 2.0
    async with serving(clickhouse_dsn, reader_max_connections=cap, reader_header_timeout_s=header_s) as served:
        refused_before = cuts("cap")
        opened = sample("om_reader_connections_open")
        held = [await asyncio.open_connection(served.host, served.port) for _ in range(cap)]
        await until(lambda: sample("om_reader_connections_open") == opened + cap, 2, "the held ones not counted")
        started = time.monotonic()
        for _ in range(extra):
            reader, writer = await asyncio.open_connection(served.host, served.port)
            answer = await closed_within(reader, header_s)
            assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer
            writer.close()
        assert time.monotonic() - started < header_s / 2, "refused at once, not cut by a timeout"
        assert cuts("cap") - refused_before == extra
        assert sample("om_reader_connections_open") == opened + cap

        for reader, _ in held:  # the held ones go at their header timeout
            assert await closed_within(reader, header_s + 3) == b""
        await until(lambda: sample("om_reader_connections_open") == opened, 2, "the cut ones still counted")
        async with aiohttp.ClientSession() as session, \
                session.get(f"{served.base}/v1/threads/calm/context", headers=CALM) as response:
            assert response.status == 200
        for _, writer in held:
            writer.close()
