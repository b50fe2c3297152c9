"""Running the reader's HTTP service: inside the worker (embedded chDB) or as its own process.

Embedded: chDB lets one process open a data directory, so the worker that sinks into it also
serves reads — on a :class:`ReaderLoop`, an event loop of its own on its own thread, sharing the
worker's client. The worker's loop runs the processor, the sink's decoding and the offline model;
a read queued behind one of their steps waited for all of it (tens to hundreds of ms), while a
thread of its own waits at most for the interpreter's switch interval. chDB releases the GIL while
it works, and everything the reader shares with the sink is thread-safe (the client serialises
its calls; the cache and the waits take locks).
Server mode: any number of stateless ``om reader serve`` processes against a ClickHouse server.
Either way the listener is a :class:`~streams.reader.connections.GuardedSite` (connection cap and
timeouts) and the app budgets its calls (streams/reader/admission.py), both from the settings.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from aiohttp import web
from clickhouse_connect.driver.client import Client

from processors.config import OMConfig
from streams.clickhouse import connect
from streams.embeddings import get_embedder
from streams.om_config import load_config
from streams.migrate import apply_migrations
from streams.reader.admission import Admission
from streams.reader.api import Reader
from streams.reader.connections import ConnectionGuard, GuardedSite
from streams.reader.context_cache import ContextCache
from streams.reader.fold_watch import FoldWatch
from streams.reader.http import create_app
from streams.reader.lazy_poll import LazyPollSelector
from streams.settings import Settings

log = logging.getLogger(__name__)


async def start_reader(client: Client, settings: Settings, config: OMConfig | None = None,
                       cache: ContextCache | None = None, folds: FoldWatch | None = None,
                       landed: Callable[[], Awaitable[None]] | None = None) -> web.AppRunner:
    """Serve the reader on ``settings.reader_host:reader_port`` from the running loop; ``cleanup()`` stops it.
    ``cache``, ``folds`` and ``landed``: the context rows' cache, the waits' wake-ups and the sink's
    writes, of this process's sink when it is the only writer (embedded)."""
    if not settings.reader_tokens:
        log.warning("reader.no_tokens", extra={"hint": "set OM_READER_TOKENS; every request will be refused"})
    embedder = get_embedder(settings.embedder) if settings.embedder else None
    reader = Reader(client, config or load_config(settings), embedder=embedder, cache=cache, folds=folds,
                    landed=landed)
    _check_descriptor_limit(settings.reader_max_connections)
    connections = ConnectionGuard.from_settings(settings)
    app = create_app(reader, settings.reader_tokens, admission=Admission.from_settings(settings),
                     connections=connections)
    runner = web.AppRunner(app, access_log=None, **connections.runner_args())
    await runner.setup()
    await GuardedSite(runner, settings.reader_host, settings.reader_port, connections).start()
    log.info("reader.serving", extra={"host": settings.reader_host, "port": settings.reader_port})
    return runner


T = TypeVar("T")


class ReaderLoop:
    """An event loop on a thread of its own, for the embedded reader (and its waits' wake-ups).

    Its thread shares the interpreter lock with the worker's (the fold, the sink's writer, the
    model's work), and a thread that wants the lock waits for the holder's switch interval: 5 ms by
    default, several times per request. The process's interval is set to ``switch_interval_s``
    (1 ms), so a read waits for the worker's Python work at most about that long per hand-over, and
    its loop skips the zero-timeout polls that soon follow another (streams/reader/lazy_poll.py), so a
    read has fewer hand-overs."""

    def __init__(self, switch_interval_s: float = 0.001) -> None:
        sys.setswitchinterval(min(sys.getswitchinterval(), switch_interval_s))
        self.selector = LazyPollSelector()
        self.loop = asyncio.SelectorEventLoop(self.selector)
        self._thread = threading.Thread(target=self.loop.run_forever, name="om-reader", daemon=True)
        self._thread.start()

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the reader's loop; awaitable from another loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


def _check_descriptor_limit(max_connections: int) -> None:
    """The cap protects the process's other descriptors (chDB's files, the broker's sockets) only
    while it stays well below the process's limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and max_connections > soft // 2:
        log.warning("reader.connection_cap_high", extra={"max_connections": max_connections, "descriptor_limit": soft,
                                                         "hint": "lower OM_READER_MAX_CONNECTIONS or raise ulimit -n"})


async def serve_reader(settings: Settings) -> None:
    """``om reader serve``: run until SIGINT/SIGTERM."""
    client = connect(settings.clickhouse_dsn)
    apply_migrations(client)
    runner = await start_reader(client, settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
