"""A sink (or a table dump) in a child process, on its own chDB data directory.

chDB runs one data directory per process, and the pytest process already hosts the session's; a
sink that the test SIGKILLs therefore runs here. ``run`` starts the sink and runs until killed;
``dump`` prints the FINAL content of every om_* table as one ``repr`` line.
"""

from __future__ import annotations

import asyncio
import sys

import orjson

from streams.clickhouse import connect
from streams.migrate import apply_migrations
from streams.sink import Sink, SinkOptions
from streams.topics import Topics
from tests.integration.om_pipeline import FAST_SINK, table_dump


async def run(dsn: str, bootstrap: str, topics_json: str, group: str, max_batch: int) -> None:
    client = connect(dsn)
    apply_migrations(client)
    topics = Topics(**orjson.loads(topics_json))
    sink = Sink(client, bootstrap, topics, SinkOptions(group_id=group, max_batch=max_batch, max_wait_ms=20,
                                                       consumer=FAST_SINK))
    await sink.start()
    print("started", flush=True)
    await sink.wait()


def main() -> None:
    mode, dsn, *rest = sys.argv[1:]
    if mode == "dump":
        print(repr(table_dump(connect(dsn))), flush=True)
        return
    bootstrap, topics_json, group, max_batch = rest
    asyncio.run(run(dsn, bootstrap, topics_json, group, int(max_batch)))


if __name__ == "__main__":
    main()
