"""The reader's HTTP API from Python: context, status and recall, typed with the reader's models.

Agents never open ClickHouse themselves (in embedded mode only the worker may), so the SDK goes
through the same HTTP API every other language uses. Errors carry the HTTP status and say what
to do next, because the usual causes (wrong token, wrong resource, reader not running) are all
fixed outside the calling code.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import aiohttp
import orjson

from processors.recall.request import RecallRequest
from streams.reader.models import ContextResponse, StatusResponse
from streams.sdk.known_messages import KnownMessages

MAX_WAIT_S = 30.0  # the reader refuses longer waits (streams/reader/http.py)

_HINTS = {
    401: "pass a token listed in the worker's OM_READER_TOKENS (--token or OM_READER_TOKEN)",
    403: "this token may not read that resource; name another resource_id or use another token",
    404: "the thread is not known for that resource yet; check the ids, or wait for the sink",
    408: "the request body arrived too slowly (OM_READER_BODY_TIMEOUT_S); send it again",
    429: "this token has used its share of the reader for now; retry after the answer's Retry-After seconds",
    504: "the message is not materialised yet; retry, or raise the timeout (at most 30 s)",
}


class ReaderError(RuntimeError):
    """A refused or failed reader call; ``status`` is the HTTP status (0 = no answer at all)."""

    def __init__(self, status: int, error: str) -> None:
        hint = _HINTS.get(status)
        super().__init__(f"reader answered {status}: {error}" + (f" — {hint}" if hint else ""))
        self.status, self.error = status, error


class ReaderClient:
    """One HTTP session to the reader; close it with :meth:`close` (or use ``async with``)."""

    def __init__(self, base_url: str, token: str | None, *, request_timeout_s: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._timeout = aiohttp.ClientTimeout(total=request_timeout_s)
        self._session: aiohttp.ClientSession | None = None
        self._known = KnownMessages()  # each thread's last context's messages, validated once

    async def __aenter__(self) -> ReaderClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def context(self, thread_id: str, resource_id: str | None = None, *,
                      wait_for_message_id: str | None = None, timeout: float = 5.0) -> ContextResponse:
        """The context the agent sends next; ``wait_for_message_id`` gives read-your-writes."""
        params = _params(resource_id=resource_id, wait_for_message_id=wait_for_message_id,
                         timeout=str(min(timeout, MAX_WAIT_S)), chat="false")  # made here: streams/sdk/known_messages.py
        body = await self._call("GET", f"/v1/threads/{_quote(thread_id)}/context", params=params)
        return self._known.response(body)

    async def status(self, thread_id: str, resource_id: str | None = None) -> StatusResponse:
        body = await self._call("GET", f"/v1/threads/{_quote(thread_id)}/status",
                                params=_params(resource_id=resource_id))
        return StatusResponse.model_validate(body)

    async def recall(self, request: RecallRequest | dict[str, Any], resource_id: str | None = None) -> dict[str, Any]:
        """One recall tool call (spec §8); the answer is the tool's dict, or ``{"error": ...}``."""
        payload = request.model_dump(exclude_none=True) if isinstance(request, RecallRequest) else dict(request)
        if resource_id is not None:
            payload["resource_id"] = resource_id
        return await self._call("POST", "/v1/recall", json=payload)

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        if self._session is None:
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=self._timeout)
        try:
            async with self._session.request(method, self.base_url + path, **kwargs) as response:
                raw = await response.read()
                status = response.status
        except aiohttp.ClientError as error:
            raise ReaderError(0, f"no answer from {self.base_url} ({error}); is a worker with a reader "
                                 "running there? (om run, OM_READER_PORT)") from error
        body = orjson.loads(raw) if raw else None
        if status >= 400:
            raise ReaderError(status, body.get("error", "") if isinstance(body, dict) else str(body))
        return body


def _params(**values: str | None) -> dict[str, str]:
    return {name: value for name, value in values.items() if value is not None}


def _quote(segment: str) -> str:
    return quote(segment, safe="")
