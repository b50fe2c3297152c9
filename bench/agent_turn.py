"""The agent's turn through the real worker: send the user message, read the context that includes it.

Workload after Mastra's own benchmark, scaled by options: ``threads`` conversations of ``turns``
turns, ~300-token user messages and ~100-token replies, thresholds 4,000 / 6,000, the deterministic
model, the embedded default (worker + chDB + reader in one process). Per turn: an acknowledged
send of the user message, then the context read, then the reply sent. Two ways to read:

* **own writes** — the SDK appends the client's own not-yet-materialised messages (no wait);
* **one call** — the same in ``OMClient.send_and_context``: the read runs while the send waits
  for its acknowledgement, and the context comes back once both are done;
* **wait** — ``wait_for_message_id``: until the processor has folded the message and the sink
  stored it (for callers that need the processor's decisions); and the same in one call
  (``send_and_context(wait=True)``: the wait begins while the send is on its way).

Baselines from the same run: a bare acknowledged produce plus a bare ``GET /healthz`` on the same
reader, by as many concurrent callers as the turns; the ratio is what the read path adds. Worker CPU
per turn comes from ``/proc/<pid>/stat``, counted until the worker is quiet again after the phase:
the pipeline's work on a phase's messages is that phase's cost, and each phase starts from a quiet
worker.

Then the read alone (issue 19 item 1's targets): ``GET …/context`` over HTTP on the threads the turns
built, at concurrency 1 and 32, beside a bare ``GET /healthz`` at the same concurrency, with the
worker's CPU per read and the reads per second.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
from aiokafka import AIOKafkaProducer

from bench.corpus import WORDS
from bench.stats import percentile, summary
from bench.worker import BOOTSTRAP, children_cpu_seconds, cpu_seconds, settled
from schemas.messages import ChatMessage, TextPart
from streams.harness.workers import WorkerProcess
from streams.sdk import OMClient
from streams.services.kafka_topics import create_topics
from streams.services.worker_process import wait_http

CONFIG = {"observation": {"messageTokens": 4000}, "reflection": {"observationTokens": 6000}}
TOKEN = "bench-agent-turn"
T0 = 1_767_600_000_000


def _text(words: int, turn: int, thread: int) -> str:
    return f"turn {turn} of {thread}: " + " ".join(WORDS[(turn * 5 + j * 3 + thread) % len(WORDS)] for j in range(words))


MODES = [  # label, in one call, waiting on the pipeline
    ("send + context (own writes)", False, False), ("send_and_context (one call)", True, False),
    ("send + context (wait)      ", False, True), ("send_and_context (wait)    ", True, True)]


async def _conversation(client: OMClient, prefix: str, thread: int, turns: int, one_call: bool, wait: bool,
                        samples: list[float]) -> None:
    tid, rid = f"{prefix}-{thread}", f"user-{thread}"
    for turn in range(turns):
        at = T0 + turn * 60_000
        user = ChatMessage(id=f"{tid}-u{turn}", thread_id=tid, resource_id=rid, role="user", created_at=at,
                           parts=[TextPart(text=_text(260, turn, thread))])
        start = time.perf_counter()
        if one_call:
            context = await client.send_and_context(user, wait=wait, timeout=60)
        else:
            await client.send(user)
            context = await client.context(tid, rid, wait_for_message_id=user.id if wait else None, timeout=60,
                                           own_messages=not wait)
        samples.append((time.perf_counter() - start) * 1000)
        assert context.messages and context.messages[-1].id == user.id
        await client.send(ChatMessage(id=f"{tid}-a{turn}", thread_id=tid, resource_id=rid, role="assistant",
                                      created_at=at + 1000, parts=[TextPart(text=_text(86, turn, thread))]))


async def _baseline(reader_url: str, topic: str, n: int, level: int) -> list[float]:
    """``n`` bare acknowledged produces, each followed by a bare ``GET /healthz``, by ``level``
    concurrent callers sharing one producer and one HTTP session, as the turns share the SDK's. The
    producer is aiokafka's default (no linger) with the SDK's durability (idempotent, ``acks=all``)."""
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, enable_idempotence=True, acks="all")
    await producer.start()
    samples: list[float] = []
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=level)) as http:
            async def caller(first: int) -> None:
                for i in range(first, n, level):
                    start = time.perf_counter()
                    await (await producer.send(topic, b"x" * 1500, key=str(i).encode()))
                    async with http.get(f"{reader_url}/healthz") as response:
                        await response.read()
                    samples.append((time.perf_counter() - start) * 1000)

            await asyncio.gather(*(caller(c) for c in range(level)))
    finally:
        await producer.stop()
    return samples


async def _gets(reader_url: str, paths: list[str], level: int, n: int, pid: int) -> tuple[list[float], float, float]:
    """``n`` GETs of ``paths`` (round robin) by ``level`` concurrent callers, after each path once:
    latencies (ms), wall (s) and the worker's CPU (s), both of the ``n`` only (a path's first read
    assembles its row's context: ~100 such reads counted in 500 put ~2 ms on each of them)."""
    samples: list[float] = []
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(reader_url, headers=headers,
                                     connector=aiohttp.TCPConnector(limit=level)) as http:
        async def caller(first: int, count: int) -> None:
            for i in range(first, count, level):
                start = time.perf_counter()
                async with http.get(paths[i % len(paths)]) as response:
                    await response.read()
                    assert response.status == 200, response.status
                samples.append((time.perf_counter() - start) * 1000)

        await asyncio.gather(*(caller(c, len(paths)) for c in range(level)))  # connections open, each path once
        samples.clear()
        cpu0, wall0 = cpu_seconds(pid), time.perf_counter()
        await asyncio.gather(*(caller(c, n) for c in range(level)))
        return samples, time.perf_counter() - wall0, cpu_seconds(pid) - cpu0


async def _reads(reader_url: str, pid: int, threads: list[tuple[str, str]], levels: list[int]) -> None:
    paths = [f"/v1/threads/{tid}/context?resource_id={rid}" for tid, rid in threads]
    print(f"\nthe read alone: GET context over HTTP, {len(threads)} threads (round robin)")
    await settled([pid], idle_share=0.05)  # the turns' work (observing, sinking) is done
    for level in levels:
        n = 500 if level == 1 else 4000
        base, _, _ = await _gets(reader_url, ["/healthz"], level, n, pid)
        samples, wall, cpu = await _gets(reader_url, paths, level, n, pid)
        p99, base99 = percentile(samples, 99), percentile(base, 99)
        print(f"concurrency {level:>2}:  baseline GET /healthz       {summary(base)}")
        print(f"  GET context                  {summary(samples)}   p99 ratio {p99 / base99:5.1f}x   "
              f"worker CPU {cpu * 1000 / n:5.2f} ms/read   {n / wall:7.0f} reads/s")


async def main(threads: int, turns: int, concurrency: list[int], read_levels: tuple[int, ...] = (1, 32)) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="om-bench-turn-"))
    reads = 2 * max(*concurrency, *read_levels)
    process = WorkerProcess(BOOTSTRAP, f"turn-{uuid.uuid4().hex[:8]}", CONFIG, workdir,
                            extra_env={"OM_LLM_CONCURRENCY": "4",
                                       "OM_READER_TOKENS": json.dumps({TOKEN: [f"user-{t}" for t in range(threads)]}),
                                       # one app's token serves every conversation here: its share of the
                                       # reader (16 calls in flight by default) must not cap the benchmark
                                       "OM_READER_READ_PER_TOKEN": str(reads), "OM_READER_READ_CONCURRENCY": str(reads)})
    try:
        handle = await asyncio.to_thread(process.start)
        reader_url = f"http://127.0.0.1:{handle.env['OM_READER_PORT']}"
        await asyncio.to_thread(wait_http, f"{reader_url}/healthz", handle.proc, handle.log)  # after Faust's web
        await settled([handle.proc.pid])  # its start-up work (the model library's import) is not a turn's
        scratch = f"{process.prefix}.baseline"
        await create_topics(BOOTSTRAP, [scratch], partitions=1, replication=1)
        settings = process.settings().model_copy(update={"reader_port": int(handle.env["OM_READER_PORT"])})
        print(f"{threads} threads x {turns} turns, ~300-token user messages, ~100-token replies, "
              f"thresholds 4,000 / 6,000, embedded worker")
        for level in concurrency:
            base = await _baseline(reader_url, scratch, max(200, 8 * level), level)
            print(f"\nconcurrency {level}:  baseline (ack'd produce + GET /healthz)  {summary(base)}")
            for number, (label, one_call, wait) in enumerate(MODES):
                samples: list[float] = []
                prefix = f"c{level}m{number}{uuid.uuid4().hex[:4]}"
                cpu0, wall0 = cpu_seconds(handle.proc.pid), time.perf_counter()
                model0 = children_cpu_seconds(handle.proc.pid)
                async with OMClient(settings, scope="thread", token=TOKEN, reader_url=reader_url) as client:
                    for first in range(0, threads, level):
                        await asyncio.gather(*(_conversation(client, prefix, t, turns, one_call, wait, samples)
                                               for t in range(first, min(threads, first + level))))
                wall = time.perf_counter() - wall0
                # the pipeline's work on this phase's messages (folds, Observer cycles, context rows) is
                # its cost too, and must not land in the next phase's figures: wait until it is done
                await settled([handle.proc.pid])
                cpu = cpu_seconds(handle.proc.pid) - cpu0
                model = children_cpu_seconds(handle.proc.pid) - model0
                p99, base99 = percentile(samples, 99), percentile(base, 99)
                print(f"  {label}  {summary(samples)}   p99 ratio {p99 / base99:5.1f}x   "
                      f"worker CPU {cpu * 1000 / len(samples):5.1f} ms/turn (+ model {model * 1000 / len(samples):4.1f})   "
                      f"{len(samples) / wall:6.1f} turns/s")
                built = [(f"{prefix}-{t}", f"user-{t}") for t in range(threads)]
        await _reads(reader_url, handle.proc.pid, built, list(read_levels))
    finally:
        process.stop()
        shutil.rmtree(workdir, ignore_errors=True)


