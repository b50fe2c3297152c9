"""``om run``: start a worker — the OM processor, the LLM workers, or both — until interrupted.

Faust's Worker owns the event loop and the signals: SIGINT/SIGTERM stop the agents, let the open
transaction finish or abort, and leave the consumer group cleanly.
"""

from __future__ import annotations

import asyncio

import faust

from streams import logs
from streams.app import Role, build_app
from streams.om_config import load_config
from streams.services.kafka_topics import create_topics
from streams.settings import Settings, get_settings
from streams.topics import Topics


async def ensure_topics(settings: Settings) -> None:
    """Create the pipeline's topics with the configured partitions before any producer or agent."""
    names = Topics.for_prefix(settings.topic_prefix).all()
    await create_topics(settings.kafka_bootstrap, names, settings.partitions, settings.replication)


def run_worker(role: Role = "all", settings: Settings | None = None) -> None:
    settings = settings or get_settings()
    logs.configure(settings.log_level)
    config = load_config(settings)
    asyncio.run(ensure_topics(settings))
    app = build_app(settings, config, role)
    # override_logging=False: Faust would add its own plain-text handler beside ours (every line twice)
    worker = faust.Worker(app, loglevel=settings.log_level, override_logging=False)
    worker.execute_from_commandline()
