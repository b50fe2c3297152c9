"""streams/fetch_wait.py: the worker's Faust consumer is built with the configured fetch long-poll."""

from __future__ import annotations

from pathlib import Path

from processors.config import OMConfig
from streams.app import build_app
from streams.settings import Settings


async def test_the_worker_consumer_long_polls_for_the_configured_time_not_faust_s(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, topic_prefix="fw", fetch_max_wait_ms=77, clickhouse_dsn="http://unused",
                        replication=1)
    app = build_app(settings, OMConfig.from_mastra({}), "processor")
    app.in_worker = True  # what faust.Worker sets; exactly_once then means transactions (read_committed)
    consumer = app.consumer._thread._create_worker_consumer(app.transport)  # what the consumer thread starts
    try:
        assert consumer._fetch_max_wait_ms == 77
        assert consumer._isolation_level == "read_committed", "everything else stays Faust's (exactly_once)"
    finally:
        await consumer.stop()
