"""The embedded worker's storage: chDB, its sink and its reader, started inside the worker.

Loaded by :mod:`streams.embedded` once the worker runs, in a thread: chDB, the sink and the reader
are ~0.4 s of imports, which a restarted worker no longer pays before it folds again (issue 20
item 4). ``running`` holds what :func:`start` started, for :func:`stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import faust

from processors.config import OMConfig
from streams.clickhouse import connect
from streams.decoded import DECODED
from streams.migrate import apply_migrations
from streams.reader.context_cache import ContextCache
from streams.reader.fold_watch import FoldWatch
from streams.reader.queries import context_key_hashes
from streams.reader.serve import ReaderLoop, start_reader
from streams.restart import error_name, restart_in_place
from streams.settings import Settings
from streams.sink.main import sink_options
from streams.sink.service import Sink
from streams.topics import Topics

log = logging.getLogger(__name__)
STORED_KEYS_STOP_S = 2.0  # a stop waits this long at most for the read of the table's keys (1M keys: ~0.6 s)


def _restart_on_sink_failure(error: BaseException) -> None:
    """The worker owns the chDB directory, so only a restart of the whole worker restarts the sink."""
    restart_in_place("om.embedded.sink_failed", error=error_name(error))


async def start(app: faust.App, settings: Settings, config: OMConfig, running: dict[str, Any]) -> None:
    client = await asyncio.to_thread(connect, settings.clickhouse_dsn)
    applied = await asyncio.to_thread(apply_migrations, client)
    cache = ContextCache()  # this sink is the directory's only writer: it feeds the reader's cache
    reads = ReaderLoop()  # the reader answers on its own thread, not behind the worker's loop
    running["reads"] = reads
    folds = FoldWatch(reads.loop)  # the sink wakes its read-your-writes waits
    app.om_awaited = folds.awaits_any  # type: ignore[attr-defined]  # a batch someone waits on commits at once

    def announce(rows: Sequence[Sequence[Any]]) -> None:
        cache.written(rows)
        folds.rows_written(rows)

    def landing(rows: Sequence[Sequence[Any]]) -> None:  # before their insert (streams/sink/writer.py)
        cache.landing(rows)
        folds.rows_written(rows)

    # one engine, three handles: a batch's start and the reader's calls never wait for an insert
    starts = await asyncio.to_thread(connect, settings.clickhouse_dsn, handle="sink-starts")
    reading = await asyncio.to_thread(connect, settings.clickhouse_dsn, handle="reader")
    sink = Sink(client, settings.kafka_bootstrap, Topics.for_prefix(settings.topic_prefix),
                replace(sink_options(settings), announce=announce, landing=landing, stored=folds.stored,
                        withdraw=cache.forget, starts=starts,
                        gather_ms=settings.sink_gather_ms))  # its reader has the rows before their insert
    await sink.start(on_failure=_restart_on_sink_failure)
    running["sink"] = sink
    DECODED.on = True  # the fold leaves what it decodes and encodes for this sink (streams/decoded.py)
    sink_loop = asyncio.get_running_loop()

    async def landed() -> None:  # the reader's loop asks the sink's (streams/sink/landings.py)
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(sink.landings.landed(), sink_loop))

    running["reader"] = await reads.run(start_reader(reading, settings, config, cache, folds, landed))
    keys = await asyncio.to_thread(connect, settings.clickhouse_dsn, handle="reader-keys")
    running["stored_keys"] = asyncio.ensure_future(_know_stored_keys(keys, cache))
    log.info("om.embedded.ready", extra={"migrations_applied": len(applied),
                                         "reader_port": settings.reader_port})


async def _know_stored_keys(client: Any, cache: ContextCache) -> None:
    """The cache learns which keys the table holds, after start (a large table takes a while): a
    first read of a key it never held then needs no query (streams/reader/context_cache.py)."""
    try:
        hashes = await asyncio.to_thread(context_key_hashes, client)
    except Exception as error:  # noqa: BLE001 - without them every unknown key is queried, as before
        log.warning("om.embedded.stored_keys_unread", extra={"error": error_name(error)})
        return
    cache.know_stored(hashes)
    log.info("om.embedded.stored_keys", extra={"keys": len(hashes)})


async def stop(running: dict[str, Any]) -> None:
    if "stored_keys" in running:  # its query runs in a thread on the engine: let it end before the engine does
        with contextlib.suppress(Exception):
            await asyncio.wait_for(running.pop("stored_keys"), STORED_KEYS_STOP_S)
    if "reader" in running:
        await running["reads"].run(running.pop("reader").cleanup())
    if "reads" in running:
        running.pop("reads").close()
    if "sink" in running:
        DECODED.on = False
        DECODED.clear()
        await running.pop("sink").stop()
