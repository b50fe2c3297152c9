"""``om sink``: the sink as its own process, for a ClickHouse server (or a chDB dir it alone opens)."""

from __future__ import annotations

import asyncio
import signal

from streams.clickhouse import connect
from streams.embeddings import get_embedder
from streams.group_predecessor import members_dir
from streams.hooks.redaction import redactor_for
from streams.migrate import apply_migrations
from streams.om_config import load_config
from streams.settings import Settings
from streams.sink.indexing import GroupIndexer
from streams.sink.service import Sink, SinkOptions
from streams.topics import Topics


def sink_options(settings: Settings) -> SinkOptions:
    """``OM_REDACT`` makes the stored messages as redacted as what the Observer saw; ``OM_EMBEDDER``
    makes the sink embed observation groups for recall search; the results topic feeds the cost
    ledger; the OM config's scope says which lookup key a stored message must be keyed by, and its
    ``daily_token_budget`` turns on the budget watch."""
    config = load_config(settings)
    return SinkOptions(group_id=settings.sink_group, max_batch=settings.sink_max_batch,
                       max_wait_ms=settings.sink_max_wait_ms, linger_ms=settings.sink_linger_ms,
                       consumer={"fetch_max_wait_ms": settings.fetch_max_wait_ms},
                       redactor=redactor_for(settings) if settings.redact else None,
                       indexer=GroupIndexer(get_embedder(settings.embedder)) if settings.embedder else None,
                       ledger=True, scope=config.scope, daily_token_budget=config.daily_token_budget,
                       members=members_dir(settings.data_dir))


def sink_from_settings(settings: Settings) -> Sink:
    """A sink on the settings' broker, topics and ClickHouse, with the schema migrated."""
    client = connect(settings.clickhouse_dsn)
    apply_migrations(client)
    return Sink(client, settings.kafka_bootstrap, Topics.for_prefix(settings.topic_prefix), sink_options(settings))


async def run_sink(settings: Settings) -> None:
    """Run until SIGINT/SIGTERM, then finish the batch in hand and leave the group."""
    sink = sink_from_settings(settings)
    await sink.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stopper = asyncio.create_task(stop.wait())
    loop_ended = asyncio.ensure_future(sink.wait())
    await asyncio.wait({stopper, loop_ended}, return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    await sink.stop()
