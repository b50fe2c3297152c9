"""An OpenAI-compatible chat server that misbehaves on purpose, in-process (aiohttp), for tests.

Each request takes the next :class:`Behaviour` of the script (the last one repeats): answer with a
finish reason, fail with an HTTP status, or answer slowly. Every request is recorded (model,
``max_tokens``, the Authorization header) so a test can count what really went over the wire.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Behaviour:
    text: str = "<observations>\nDate: Jan 1, 2026\n* 🔴 (10:00) User said hello.\n</observations>"
    finish_reason: str = "stop"
    status: int = 200
    delay_s: float = 0.0
    output_tokens: int = 20


@dataclass
class Seen:
    model: str
    max_tokens: int | None
    authorization: str | None
    at: float
    body: dict[str, Any] = field(repr=False, default_factory=dict)


class FakeOpenAI:
    def __init__(self, *script: Behaviour) -> None:
        self.script = list(script) or [Behaviour()]
        self.seen: list[Seen] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seen.append(Seen(body.get("model", ""), body.get("max_tokens") or body.get("max_completion_tokens"),
                              request.headers.get("Authorization"), time.monotonic(), body))
        behaviour = self.script[min(len(self.seen) - 1, len(self.script) - 1)]
        if behaviour.delay_s:
            await asyncio.sleep(behaviour.delay_s)
        if behaviour.status != 200:
            return web.json_response({"error": {"message": "fake failure", "type": "server_error"}},
                                     status=behaviour.status)
        return web.json_response({
            "id": f"chatcmpl-{len(self.seen)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": behaviour.finish_reason,
                         "message": {"role": "assistant", "content": behaviour.text}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": behaviour.output_tokens,
                      "total_tokens": 100 + behaviour.output_tokens},
        })
