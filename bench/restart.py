"""Back to work after a restart or a rebalance: how long until a waiting message is folded.

A worker folds some conversations (so its state changelog holds their key states), then is
restarted — after a clean stop (SIGTERM) and after a kill -9 — with a message already waiting; the
figure is spawn → that message's status event visible (read_committed). The baseline is the same
worker's very first start on fresh topics, in this run: the same process start, but no state to
recover. The worker's own log splits each figure into process start (imports, topics, hanging
transaction cleanup), Faust start → recovery done, and recovery done → folded. After a kill -9 the
group also waits for the dead member's session to expire (OM_SESSION_TIMEOUT_MS in the harness).

The rebalance figure: a second worker that owns some partitions is stopped (SIGTERM) and a message
is produced on every partition; the first gains the peer's partitions, recovers their state and
folds them (seconds from the signal to the last folded).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from aiokafka.partitioner import murmur2

from bench.corpus import messages
from bench.worker import BOOTSTRAP, Arrivals, keyed
from processors.machine import lookup_key
from schemas.messages import ChatMessage, TextPart
from streams.harness.worker_log import log_entries
from streams.harness.workers import WorkerProcess, produce, wait_until
from streams.topics import Topics
from streams.worker import ensure_topics

PARTITIONS = 2


@dataclass
class Start:
    """Seconds from spawn (wall clock) to each milestone of one worker start."""

    faust: float
    recovered: float
    folded: float

    def line(self, name: str, baseline: float | None = None) -> str:
        ratio = f"   x{self.folded / baseline:5.2f} the baseline" if baseline else ""
        return (f"{name:34} {self.folded:6.2f} s   (process {self.faust:5.2f} s, Faust → recovered "
                f"{self.recovered - self.faust:5.2f} s, → folded {self.folded - self.recovered:5.2f} s){ratio}")


def waiting(name: str, thread: str) -> ChatMessage:
    """Dated now: after the corpus's messages (so not late), and not ahead of its record's log time
    (the fold refuses an event more than an hour ahead: streams/fold.py ``MAX_LEAD_MS``)."""
    return ChatMessage(id=name, thread_id=thread, resource_id=f"r-{thread}", role="user",
                       created_at=int(time.time() * 1000), parts=[TextPart(text=f"{name} waits for the worker")])


def one_per_partition(tag: str) -> list[ChatMessage]:
    """A waiting message on every partition (threads chosen by their lookup key's partition)."""
    chosen: dict[int, ChatMessage] = {}
    i = 0
    while len(chosen) < PARTITIONS:
        thread = f"{tag}-{i}"
        partition = (murmur2(lookup_key("thread", thread, f"r-{thread}").encode()) & 0x7FFFFFFF) % PARTITIONS
        chosen.setdefault(partition, waiting(f"{thread}-m", thread))
        i += 1
    return list(chosen.values())


def milestones(log: Path, spawned_wall: float, start_index: int) -> tuple[float, float]:
    """Spawn → Faust started, spawn → recovery done, for the ``start_index``-th start in ``log``."""
    lines = log_entries(log)
    faust = [e["ts"] for e in lines if re.match(r"\[\^_?Worker\]: Starting", e["event"])][start_index]
    ready = [e["ts"] for e in lines if e["event"].endswith("Worker ready") and e["ts"] >= faust][0]
    return faust - spawned_wall, ready - spawned_wall


def owns_input(log: Path, topic: str) -> bool:
    """The worker's last assignment includes a partition of ``topic`` and it recovered since."""
    lines = log_entries(log)
    assigned = [i for i, e in enumerate(lines) if e["event"].startswith("Setting newly assigned partitions")]
    return bool(assigned) and f"topic='{topic}'" in lines[assigned[-1]]["event"] and any(
        e["event"].endswith("Worker ready") for e in lines[assigned[-1]:])


async def timed_start(process: WorkerProcess, arrivals: Arrivals, message: ChatMessage, start_index: int,
                      restart: bool) -> Start:
    topics = Topics.for_prefix(process.prefix)
    await produce(BOOTSTRAP, topics.messages, keyed([message]))
    wall, spawned = time.time(), time.perf_counter()
    await asyncio.to_thread(process.restart_killed if restart else process.start)
    folded = await arrivals.wait_all([message.id], deadline_s=180) - spawned
    faust, recovered = milestones(process.handles[0].log, wall, start_index)
    return Start(faust, recovered, folded)


async def main(threads: int, per_thread: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="om-bench-restart-"))
    process = WorkerProcess(BOOTSTRAP, f"bench-{uuid.uuid4().hex[:8]}", {}, workdir, partitions=PARTITIONS,
                            extra_env={"OM_LLM_CONCURRENCY": "4", "OM_LOG_LEVEL": "INFO"})
    topics = Topics.for_prefix(process.prefix)
    try:
        await ensure_topics(process.settings())  # so the waiting message lands on a partitioned topic
        async with Arrivals(BOOTSTRAP, topics.events) as arrivals:
            cold = await timed_start(process, arrivals, waiting("cold", "cold"), 0, restart=False)
            batch = list(messages(threads, per_thread, salt="restart"))
            await produce(BOOTSTRAP, topics.messages, keyed(batch))
            await arrivals.wait_all((m.id for m in batch), deadline_s=300)
            began = time.perf_counter()
            await asyncio.to_thread(process.handles[0].stop)
            stop_s = time.perf_counter() - began
            stopped = await timed_start(process, arrivals, waiting("after-stop", "t0"), 1, restart=True)
            process.kill()
            killed = await timed_start(process, arrivals, waiting("after-kill", "t1"), 2, restart=True)
            gained = await rebalance(process, arrivals)
        print(f"{len(batch):,} messages in {threads} threads folded first (state of {threads} keys), "
              f"{PARTITIONS} partitions, deterministic model")
        print(cold.line("baseline: first start, no state"))
        print(f"{'clean stop: SIGTERM → exited':34} {stop_s:6.2f} s   (a deploy's restart is this and the next line)")
        print(stopped.line("restart after a clean stop", cold.folded))
        print(killed.line("restart after kill -9", cold.folded))
        print(f"{'rebalance: peer stopped → folded':34} {gained:6.2f} s   (a message on each of "
              f"{PARTITIONS} partitions, the peer's among them)")
    finally:
        process.stop()
        shutil.rmtree(workdir, ignore_errors=True)


async def rebalance(process: WorkerProcess, arrivals: Arrivals) -> float:
    """A second worker joins and takes partitions; once it owns some, it is sent SIGTERM (it stops
    fetching, then leaves the group) and a message is produced on every partition; seconds from the
    signal to the last of those folded, which the first worker can do only once it owns and has
    recovered the peer's partitions."""
    topic = Topics.for_prefix(process.prefix).messages
    peer = await asyncio.to_thread(process.start)
    joined = one_per_partition("joined")
    await produce(BOOTSTRAP, topic, keyed(joined))
    await arrivals.wait_all((m.id for m in joined), deadline_s=120)
    await wait_until(lambda: owns_input(peer.log, topic), 120, "the second worker never owned an input partition")
    assert peer.proc is not None
    start = time.perf_counter()
    peer.proc.send_signal(signal.SIGTERM)  # Faust stops fetching first, then leaves the group
    left = one_per_partition("left")
    await produce(BOOTSTRAP, topic, keyed(left))
    folded = await arrivals.wait_all((m.id for m in left), deadline_s=120) - start
    await asyncio.to_thread(peer.stop)
    return folded
