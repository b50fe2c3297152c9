"""Issue 26: a ClickHouse server that goes away under the reader is a 503 with Retry-After, and the
reader answers again once it is back; a real query error is still not dressed up as an outage."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from clickhouse_connect.driver.exceptions import DatabaseError, OperationalError
from urllib3.exceptions import NewConnectionError

from streams.reader.api import Reader
from streams.reader.http import create_app

TOKENS = {"t": ["r1"]}
AUTH = {"Authorization": "Bearer t"}


class SwitchableClickHouse:
    """A clickhouse-connect client stand-in: down raises what its HTTP transport raises."""

    def __init__(self) -> None:
        self.down = True
        self.error: Exception | None = None

    def query(self, sql: str, parameters: dict[str, Any] | None = None) -> Any:
        if self.error is not None:
            raise self.error
        if self.down:
            try:
                raise NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused")
            except NewConnectionError as transport:
                raise OperationalError("Error executing HTTP request attempt 1 (http://127.0.0.1:8123)") from transport
        return _Empty()


class _Empty:
    result_rows: tuple = ()


async def _client(clickhouse: SwitchableClickHouse) -> TestClient:
    client = TestClient(TestServer(create_app(Reader(clickhouse), TOKENS)))  # type: ignore[arg-type]
    await client.start_server()
    return client


async def test_a_clickhouse_outage_is_a_503_with_retry_after_until_it_is_back() -> None:
    clickhouse = SwitchableClickHouse()
    client = await _client(clickhouse)
    try:
        for path in ("/v1/threads/t1/context", "/v1/threads/t1/status"):
            response = await client.get(path, headers=AUTH)
            assert response.status == 503
            assert response.headers["Retry-After"] == "5"
            assert (await response.json())["error"] == "ClickHouse is not reachable; retry in 5 s"
        recall = await client.post("/v1/recall", json={"mode": "threads"}, headers=AUTH)
        assert recall.status == 503 and recall.headers["Retry-After"] == "5"
        clickhouse.down = False
        back = await client.get("/v1/threads/t1/status", headers=AUTH)
        assert back.status == 404  # answered again: that thread simply does not exist
    finally:
        await client.close()


async def test_a_query_error_is_not_reported_as_an_outage() -> None:
    clickhouse = SwitchableClickHouse()
    clickhouse.error = DatabaseError("Code: 47. Unknown identifier")
    client = await _client(clickhouse)
    try:
        response = await client.get("/v1/threads/t1/status", headers=AUTH)
        assert response.status == 500 and "Retry-After" not in response.headers
    finally:
        await client.close()
