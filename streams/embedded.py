"""Embedded storage: the worker that owns the chDB directory also runs the sink and the reader.

chDB lets one process open a data directory, so on a laptop (``chdb://`` DSN) the worker process
applies the migrations, materialises the topics and serves the reader's HTTP API itself. With a
ClickHouse server (``http(s)://``) these run as separate processes (``om sink``, ``om reader
serve``) and this module stays out of the way.

What runs is in :mod:`streams.embedded_storage`, imported once the worker runs, in a thread: its
imports (chDB, the sink, the reader: ~0.4 s) are not paid before the worker's first fold, so a
restarted worker folds again that much sooner (issue 20 item 4; bench 2b).
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import faust

from processors.config import OMConfig
from streams.settings import Settings

STORAGE = "streams.embedded_storage"


def is_embedded(settings: Settings) -> bool:
    return settings.clickhouse_dsn.startswith("chdb:")


def install(app: faust.App, settings: Settings, config: OMConfig) -> None:
    running: dict[str, Any] = {}

    @app.task
    async def start_storage() -> None:
        storage = await asyncio.to_thread(importlib.import_module, STORAGE)
        await storage.start(app, settings, config, running)

    @app.on_before_shutdown.connect
    async def stop_storage(app: faust.App, **_: Any) -> None:
        if running:
            await importlib.import_module(STORAGE).stop(running)
