"""Recovering many keys: a worker restarted over a changelog that holds N keys' states.

The changelog is filled directly with the records a worker's batches write for N keys (one
~200-token message each, made by ``decide`` and written by streams/state_changelog.py ``writes``),
each on the partition its key's input goes to, while no worker runs. Then the worker starts; the
figures are spawn → Faust's recovery done (from its log) and → a waiting message folded, beside the
same worker's first start on empty topics in this run (the baseline), and the worker's resident set
once it holds every key (VmRSS of its process; recovery decodes no state: streams/state_store.py).
Last, that worker is stopped cleanly and started again: it adopts the store it kept
(streams/state_checkpoint.py) and reads only the changelog after its checkpoint; then, once it has
made a snapshot of its store (streams/state_snapshots.py, every ``SNAPSHOT_S`` here), it is killed
(-9) and started again: it adopts the snapshot.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import murmur2

from bench.corpus import messages
from bench.memory import rss_bytes
from bench.restart import PARTITIONS, timed_start, waiting
from bench.worker import BOOTSTRAP, Arrivals
from processors.config import OMConfig
from processors.machine import decide, event_key
from streams.harness.workers import WorkerProcess, next_log_event
from streams.internal_topics import app_id, changelog_topic
from streams.state_changelog import writes
from streams.topics import Topics
from streams.worker import ensure_topics

IN_FLIGHT = 20_000  # records sent before their confirmations are awaited
SNAPSHOT_S = 5  # the worker's OM_STATE_SNAPSHOT_S here (60 by default): the kill waits for one


async def fill_changelog(topic: str, keys: int) -> tuple[int, int, float]:
    """(records, bytes, seconds) of writing ``keys`` keys' changelog records to ``topic``."""
    config = OMConfig.from_mastra({})
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, linger_ms=20, max_batch_size=1 << 20)
    await producer.start()
    records = size = 0
    started = time.perf_counter()
    try:
        pending = []
        for n, message in enumerate(messages(keys, 1, salt="recovery")):
            key = event_key(message, config)
            partition = (murmur2(key.encode()) & 0x7FFFFFFF) % PARTITIONS
            for record_key, value in writes(key, None, decide(None, message, config).state):
                pending.append(await producer.send(topic, value, key=record_key, partition=partition))
                records, size = records + 1, size + len(record_key) + len(value or b"")
            if len(pending) >= IN_FLIGHT:
                await asyncio.gather(*pending)
                pending = []
            if n % 100_000 == 99_999:
                print(f"  … {n + 1:,} keys written ({time.perf_counter() - started:.0f} s)", flush=True)
        await asyncio.gather(*pending)
    finally:
        await producer.stop()
    return records, size, time.perf_counter() - started


async def main(keys: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="om-bench-recovery-"))
    process = WorkerProcess(BOOTSTRAP, f"bench-{uuid.uuid4().hex[:8]}", {}, workdir, partitions=PARTITIONS,
                            extra_env={"OM_LOG_LEVEL": "INFO", "OM_STATE_SNAPSHOT_S": str(SNAPSHOT_S)})
    topics = Topics.for_prefix(process.prefix)
    try:
        await ensure_topics(process.settings())
        async with Arrivals(BOOTSTRAP, topics.events) as arrivals:
            cold = await timed_start(process, arrivals, waiting("cold", "cold"), 0, restart=False)
            assert process.handles[0].proc is not None
            cold_rss = rss_bytes(process.handles[0].proc.pid)
            process.handles[0].stop()
            records, size, filled = await fill_changelog(changelog_topic(app_id(process.prefix, "all")), keys)
            warm = await timed_start(process, arrivals, waiting("recovered", "after-recovery"), 1, restart=True)
            assert process.handles[0].proc is not None
            warm_rss = rss_bytes(process.handles[0].proc.pid)
            process.handles[0].stop()
            kept = await timed_start(process, arrivals, waiting("kept", "after-kept"), 2, restart=True)
            snapshot = await next_log_event(process.handles[0].log, "om.state_store.snapshot", 120,
                                            "the worker made no snapshot of its store")
            copy_s = snapshot["fence_s"]
            process.kill()
            crashed = await timed_start(process, arrivals, waiting("crashed", "after-crash"), 3, restart=True)
        mib = 2**20
        print(f"{keys:,} keys (one ~200-token message each): {records:,} changelog records, "
              f"{size / mib:,.0f} MiB, written in {filled:.0f} s; {PARTITIONS} partitions, one worker")
        print(cold.line("baseline: first start, no state"))
        print(warm.line(f"restart over {keys:,} keys", cold.folded))
        print(f"{'recovery rate':34} {records / max(warm.recovered - warm.faust, 1e-9):8,.0f} records/s   "
              f"{keys / max(warm.recovered - warm.faust, 1e-9):8,.0f} keys/s")
        print(kept.line("restart after a clean stop (kept)", cold.folded))
        print(crashed.line("restart after kill -9 (snapshot)", cold.folded))
        print(f"{'the snapshot: fence held':34} {copy_s:6.2f} s   (every OM_STATE_SNAPSHOT_S, 60 s by default)")
        print(f"{'worker RSS: first start':34} {cold_rss / mib:8.1f} MiB")
        print(f"{'worker RSS: holding every key':34} {warm_rss / mib:8.1f} MiB   "
              f"{(warm_rss - cold_rss) / keys:6.0f} B per key")
    finally:
        process.stop()
        shutil.rmtree(workdir, ignore_errors=True)
