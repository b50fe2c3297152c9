"""A minimal Faust app for the exactly-once compatibility test: count records per key in a table.

Run as its own worker process (``faust -A tests.integration.faust_counter_app worker``) so the
test exercises Faust exactly as deployed. Configured by env: FAUST_TEST_BROKER, FAUST_TEST_APP_ID,
FAUST_TEST_SOURCE, FAUST_TEST_SINK, FAUST_TEST_DATA_DIR (Faust's data directory, which defaults to one
in the working directory), and FAUST_TEST_TABLE_MANAGER (Faust's own by default).
"""

import os

import faust

app = faust.App(
    os.environ["FAUST_TEST_APP_ID"],
    broker=f"kafka://{os.environ['FAUST_TEST_BROKER']}",
    store="memory://",
    datadir=os.environ["FAUST_TEST_DATA_DIR"],
    processing_guarantee="exactly_once",
    topic_partitions=2,
    topic_replication_factor=1,
    web_enabled=False,
    broker_commit_interval=0.2,
    TableManager=os.environ.get("FAUST_TEST_TABLE_MANAGER", "faust.tables:TableManager"),
)
source = app.topic(os.environ["FAUST_TEST_SOURCE"], key_serializer="raw", value_serializer="raw")
sink = app.topic(os.environ["FAUST_TEST_SINK"], key_serializer="raw", value_serializer="raw")
counts = app.Table("counts", default=int, partitions=2)


@app.agent(source)
async def count(stream):
    async for key, _value in stream.items():
        counts[key.decode()] += 1
        await sink.send(key=key, value=str(counts[key.decode()]).encode())
