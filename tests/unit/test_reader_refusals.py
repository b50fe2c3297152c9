"""Issue 18 item 8: the reader's refusals leak nothing and never fail with a 500.

An empty bearer token never authenticates; ``resource_id`` of the wrong JSON type is a 400; a
thread another resource owns is refused after the same queries as a thread that does not exist.
"""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from streams.reader import Reader, ThreadNotFound, queries
from streams.reader.context_row import ContextRow, Head
from streams.reader.http import create_app


class _Reader:
    def recall(self, resource_id: str, request: dict[str, Any]) -> dict[str, Any]:
        return {"resource": resource_id}

    async def tables_landed(self) -> None:  # no sink: the tables are as they are
        return None


async def _client(tokens: dict[str, list[str]]) -> TestClient:
    client = TestClient(TestServer(create_app(_Reader(), tokens)))  # type: ignore[arg-type]
    await client.start_server()
    return client


@pytest.mark.parametrize("header", ["Bearer ", "Bearer", "bearer  "])
async def test_an_empty_bearer_token_never_authenticates(header: str) -> None:
    client = await _client({"": ["r1"], "real": ["r1"]})
    try:
        response = await client.post("/v1/recall", json={}, headers={"Authorization": header})
        assert response.status == 401
    finally:
        await client.close()


@pytest.mark.parametrize("named", [["r1"], {"r": 1}, 7, True])
async def test_a_resource_id_of_the_wrong_json_type_is_a_400(named: object) -> None:
    client = await _client({"real": ["r1"]})
    try:
        response = await client.post("/v1/recall", json={"resource_id": named},
                                     headers={"Authorization": "Bearer real"})
        assert response.status == 400
        assert (await response.json())["error"] == "resource_id must be a string"
        ok = await client.post("/v1/recall", json={"resource_id": "r1"}, headers={"Authorization": "Bearer real"})
        assert ok.status == 200 and (await ok.json()) == {"resource": "r1"}
    finally:
        await client.close()


async def test_another_resources_thread_costs_the_same_queries_as_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    head = Head("thread:theirs", 0, 3, "", "UTC", {})
    theirs = ContextRow("r-other", "thread:theirs", head, None, None, "{}", frozenset({"theirs"}), ("theirs",), 7)

    def context_rows(client: Any, keys: list[str]) -> list[dict[str, ContextRow]]:
        calls.append(list(keys))
        return [{"r-other": theirs} if key == "thread:theirs" else {} for key in keys]

    monkeypatch.setattr(queries, "context_rows", context_rows)
    reader = Reader(None)  # type: ignore[arg-type]
    costs = {}
    for thread in ("theirs", "missing"):
        calls.clear()
        with pytest.raises(ThreadNotFound):
            await reader.context(thread, "r-me")
        with pytest.raises(ThreadNotFound):
            await reader.status(thread, "r-me")
        costs[thread] = len(calls)
    assert costs["theirs"] == costs["missing"] == 2, "one row lookup per call, whoever owns the thread"
    assert (await reader.status("theirs", "r-other")) is None, "the owner reads it"


async def test_a_recall_reads_the_tables_only_once_the_sinks_writes_landed() -> None:
    """Embedded, a wait may return on rows the sink has not inserted yet; the recall tool reads the
    tables themselves, so its route waits for ``tables_landed`` first (streams/sink/landings.py)."""
    import asyncio

    landed, order = asyncio.Event(), []

    class _Landing(_Reader):
        async def tables_landed(self) -> None:
            await landed.wait()
            order.append("landed")

        def recall(self, resource_id: str, request: dict[str, Any]) -> dict[str, Any]:
            order.append("recall")
            return super().recall(resource_id, request)

    client = TestClient(TestServer(create_app(_Landing(), {"real": ["r1"]})))  # type: ignore[arg-type]
    await client.start_server()
    try:
        asked = asyncio.ensure_future(client.post("/v1/recall", json={"resource_id": "r1"},
                                                  headers={"Authorization": "Bearer real"}))
        for _ in range(20):
            await asyncio.sleep(0)
        assert order == [] and not asked.done()
        landed.set()
        response = await asyncio.wait_for(asked, 10)
        assert response.status == 200 and order == ["landed", "recall"]
    finally:
        await client.close()
