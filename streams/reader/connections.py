"""Connection hygiene for the reader's listener (issue 18 item 9): slow or idle clients cannot hold
descriptors the process needs (in the embedded worker, the sink's chDB inserts share them).

Rules this module keeps:

* At most ``max_connections`` are open. One more is answered a fixed ``503`` with ``Retry-After``
  and closed at once, before anything of it is parsed; the listener keeps accepting.
* A connection must deliver a complete request head within ``header_timeout_s`` of opening, or of
  the first byte after an idle keep-alive pause; more bytes do not extend it (slow-loris).
* Between requests, a connection that sends nothing for ``idle_timeout_s`` is closed.
* While a request is being handled no timer runs here: the handler bounds its own body read
  (``body_timeout_s``, see :func:`read_body`) and its work (the wait cap, admission control). A
  body it left unread is drained by aiohttp for at most ``body_timeout_s``, then the connection closes.
* Every connection the reader closes on its own is counted by reason (``om_reader_connections_cut``),
  and the open ones are a gauge; no address or id is recorded.

How: :class:`GuardedSite` listens with a protocol factory that wraps each of aiohttp's request
handlers in :class:`_Guarded`, which counts the connection, keeps its timer and passes every
transport event on unchanged. The app's middleware (:meth:`ConnectionGuard.middleware`) tells the
guard when a request starts and ends. aiohttp's own keep-alive timer stays as a backstop, set
longer than both timeouts (:meth:`ConnectionGuard.runner_args`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Literal

from aiohttp import web

from streams import metrics
from streams.settings import Settings

log = logging.getLogger(__name__)

Cut = Literal["cap", "slow-head", "idle", "slow-body"]
_BODY = b'{"error":"too many open connections; retry in 1 s"}'
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
           b"Connection: close\r\nContent-Length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)


class ConnectionGuard:
    def __init__(self, max_connections: int, header_timeout_s: float, idle_timeout_s: float,
                 body_timeout_s: float) -> None:
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.body_timeout_s = body_timeout_s
        self._open: dict[asyncio.BaseTransport, _Connection] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionGuard:
        return cls(settings.reader_max_connections, settings.reader_header_timeout_s,
                   settings.reader_idle_timeout_s, settings.reader_body_timeout_s)

    def runner_args(self) -> dict[str, float]:
        """aiohttp's handler settings: its keep-alive close only backs ours up; an unread body is
        drained (so the client reads the answer) for at most the body timeout."""
        return {"keepalive_timeout": self.idle_timeout_s + self.header_timeout_s, "lingering_time": self.body_timeout_s}

    def protocol_factory(self, make_handler: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        return lambda: _Guarded(self, make_handler)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        connection = self._open.get(request.transport) if request.transport is not None else None
        if connection is None:  # not served through a guarded site (a test server)
            return await handler(request)
        connection.busy()
        try:
            return await handler(request)
        finally:
            connection.idle(body_read=request.content.is_eof())

    def _admit(self, transport: asyncio.Transport) -> _Connection | None:
        if len(self._open) >= self.max_connections:
            metrics.reader_connection_cut("cap")
            transport.write(REFUSAL)
            transport.close()
            return None
        connection = _Connection(self, transport)
        self._open[transport] = connection
        metrics.READER_CONNECTIONS_OPEN.inc()
        return connection

    def _forget(self, connection: _Connection) -> None:
        if self._open.pop(connection.transport, None) is not None:
            metrics.READER_CONNECTIONS_OPEN.dec()


class _Connection:
    """One open connection's timer: armed while no request is being handled."""

    def __init__(self, guard: ConnectionGuard, transport: asyncio.Transport) -> None:
        self.guard = guard
        self.transport = transport
        self._timer: asyncio.TimerHandle | None = None
        self._waiting_for: Cut | None = None
        self._draining = False
        self._arm("slow-head", guard.header_timeout_s)

    def busy(self) -> None:
        self._disarm()

    def idle(self, *, body_read: bool) -> None:
        """A body the handler left unread is drained by aiohttp for at most the body timeout, then the
        connection closes, or, if the body did end, waits idle: its bytes are no new request."""
        if body_read:
            self._arm("idle", self.guard.idle_timeout_s)
        else:
            self._arm("idle", self.guard.body_timeout_s + self.guard.idle_timeout_s, draining=True)

    def bytes_arrived(self) -> None:
        """The first byte after an idle pause starts the head's deadline; later ones change nothing."""
        if self._waiting_for == "idle" and not self._draining:
            self._arm("slow-head", self.guard.header_timeout_s)

    def closed(self) -> None:
        self._disarm()
        self.guard._forget(self)

    def _arm(self, reason: Cut, seconds: float, *, draining: bool = False) -> None:
        self._disarm()
        self._waiting_for, self._draining = reason, draining
        self._timer = asyncio.get_running_loop().call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._waiting_for = None, None

    def _expire(self) -> None:
        reason = self._waiting_for
        self._timer, self._waiting_for = None, None
        if reason is None or self.transport.is_closing():
            return
        metrics.reader_connection_cut(reason)
        log.debug("reader.connection.cut", extra={"reason": reason})
        if self.transport.get_write_buffer_size():
            self.transport.abort()  # a client that does not read its last answer does not keep the descriptor
        else:
            self.transport.close()


class _Guarded(asyncio.Protocol):
    """aiohttp's request handler behind the guard; made only once the connection is admitted."""

    def __init__(self, guard: ConnectionGuard, make_handler: Callable[[], asyncio.Protocol]) -> None:
        self._guard = guard
        self._make_handler = make_handler
        self._inner: asyncio.Protocol | None = None
        self._connection: _Connection | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._connection = self._guard._admit(transport)
        if self._connection is not None:
            self._inner = self._make_handler()
            self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._inner is not None and self._connection is not None:
            self._connection.bytes_arrived()
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._connection is not None:
            self._connection.closed()
        if self._inner is not None:
            self._inner.connection_lost(exc)
            self._inner = None


async def read_body(request: web.Request, guard: ConnectionGuard) -> bytes:
    """The request body, or a 408 once ``body_timeout_s`` passed (aiohttp then drains what is left for
    at most as long, see :meth:`ConnectionGuard.runner_args`, and closes the connection)."""
    try:
        async with asyncio.timeout(guard.body_timeout_s):
            return await request.read()
    except TimeoutError:
        metrics.reader_connection_cut("slow-body")
        raise web.HTTPRequestTimeout(reason=f"the request body did not arrive within {guard.body_timeout_s} s") from None


class GuardedSite(web.BaseSite):
    """A TCP listener whose connections go through a :class:`ConnectionGuard`."""

    __slots__ = ("_guard", "_host", "_port")

    def __init__(self, runner: web.BaseRunner, host: str, port: int, guard: ConnectionGuard, *,
                 backlog: int = 128) -> None:
        super().__init__(runner, backlog=backlog)
        self._host, self._port, self._guard = host, port, guard

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            self._guard.protocol_factory(server), self._host, self._port, backlog=self._backlog)
