"""End-to-end latency at a fixed offered load: produce a message → its status event is visible.

Messages are sent at ``rate`` per second (paced, not in a burst) to a real worker, by a producer set
as the SDK's is for sends beside each other (streams/sdk/delivery.py: idempotent, ``acks=all``,
``linger_ms=5``: what an app sending through it costs the broker; one request per message cost it
half again; a send alone goes at once, without the linger); a message's
latency ends when a read_committed consumer sees the status event whose ``applied_through`` is that
message. The baseline is the broker alone at the same pace: a record's produce → consume round
trip on a plain topic, so the ratio is what the processor and its transactions add. Issue 19's
target is p99 ≤ 2× the commit interval (``OM_COMMIT_INTERVAL_MS``) at 1,000 messages/s.

Once per layout — one worker (embedded sink and model in the process), then the roles split
(processor with the embedded sink + LLM worker, as section 1b) — it also prints the rate the
worker kept up (messages over the span from the first send to the last status), so a load above
what the worker sustains shows as such rather than as an ever-growing queue, and the worker's CPU
per message (all its processes). On a machine whose cores the broker and this client share with the
worker, what a message costs all of them decides whether a rate is kept up: a last line gives each
one's CPU per message (the worker's roles, the local broker of ``om services up`` when it is the one
in use, this benchmark's own process) and what they add up to in cores at the offered rate.
"""

from __future__ import annotations

import asyncio
import os
import time

from aiokafka import AIOKafkaProducer

from bench.corpus import messages
from bench.stats import percentile, summary
from bench.worker import (BOOTSTRAP, Arrivals, children_cpu_seconds, cpu_seconds, keyed, local_broker_pid,
                          running_worker)
from streams.services.kafka_topics import create_topics
from streams.settings import get_settings

PINGS = 200  # enough for a p99 of the broker alone, at the same pace


async def paced(topic: str, items: list[tuple[str, bytes]], names: list[str], rate: float) -> dict[str, float]:
    """Send ``items`` at ``rate``/s as the SDK's producer would; returns when each (by name) was handed to it."""
    producer = AIOKafkaProducer(bootstrap_servers=BOOTSTRAP, enable_idempotence=True, acks="all", linger_ms=5)
    await producer.start()
    sent: dict[str, float] = {}
    try:
        start = time.perf_counter()
        for i, ((key, value), name) in enumerate(zip(items, names)):
            await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
            sent[name] = time.perf_counter()
            await producer.send(topic, value, key=key.encode())
        await producer.flush()
    finally:
        await producer.stop()
    return sent


async def latencies(topic: str, arrivals: Arrivals, items: list[tuple[str, bytes]], names: list[str],
                    rate: float) -> list[float]:
    sent = await paced(topic, items, names, rate)
    await arrivals.wait_all(names, deadline_s=120)
    return [(arrivals.at[n] - sent[n]) * 1000 for n in names]


async def broker_round_trips(prefix: str, count: int, rate: float) -> list[float]:
    topic = f"{prefix}.bench-ping"
    await create_topics(BOOTSTRAP, [topic])
    names = [f"ping-{i}" for i in range(count)]
    async with Arrivals(BOOTSTRAP, topic, ident=bytes.decode) as pings:
        await asyncio.sleep(0.5)  # let the first pings not pay for the consumer's first metadata fetch
        return await latencies(topic, pings, [("ping", n.encode()) for n in names], names, rate)


def cpu_line(spent: dict[str, float], count: int, rate: float) -> str:
    """Each process's CPU per message and what all of them take in cores at ``rate``."""
    per = {name: seconds * 1000 / count for name, seconds in spent.items()}
    return ("CPU per message: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in per.items())
            + f"; together {sum(per.values()):.2f} ms = {sum(per.values()) * rate / 1000:.2f} cores at {rate:g}/s")


async def main(rate: float, seconds: float, threads: int) -> None:
    count = int(rate * seconds)
    batch = list(messages(threads, -(-count // threads), salt="latency"))[:count]
    commit_ms = get_settings().commit_interval_ms
    print(f"{count} messages at {rate:g}/s over {threads} threads ({seconds:g} s), default config, deterministic model")
    for label, roles in (("one worker", ("all",)), ("roles split", ("processor", "llm"))):
        pids: dict[str, int] = {}
        async with running_worker({}, roles, pids) as (topics, arrivals):
            baseline = await broker_round_trips(topics.messages.split(".")[0], min(count, PINGS), rate)
            others = {"broker": local_broker_pid(), "bench client": os.getpid()}
            counted = {**pids, **{name: pid for name, pid in others.items() if pid is not None}}
            cpu0 = {name: cpu_seconds(pid) for name, pid in counted.items()}
            model0 = sum(children_cpu_seconds(pid) for pid in pids.values())
            sent = await paced(topics.messages, keyed(batch), [m.id for m in batch], rate)
            last = await arrivals.wait_all(sent, deadline_s=300)
            spent = {name: cpu_seconds(pid) - cpu0[name] for name, pid in counted.items()}
            spent["offline model"] = sum(children_cpu_seconds(pid) for pid in pids.values()) - model0
            cpu = sum(spent[role] for role in pids)
        measured = [(arrivals.at[n] - sent[n]) * 1000 for n in sent]
        kept_up = count / (last - min(sent.values()))
        print(f"\n{label} ({' + '.join(roles)})")
        print(f"baseline: broker produce → consume     {summary(baseline)}")
        print(f"worker: produce → status visible       {summary(measured)}")
        print("ratio worker/broker                    " + "  ".join(
            f"p{q} {percentile(measured, q) / percentile(baseline, q):8.1f}x" for q in (50, 95, 99)))
        print(f"p99 / commit interval ({commit_ms} ms)        {percentile(measured, 99) / commit_ms:8.1f}x   "
              f"(target ≤ 2x)   kept up {kept_up:6.0f} msgs/s of {rate:g} offered   "
              f"worker CPU {cpu * 1000 / count:5.2f} ms/msg")
        print(cpu_line(spent, count, rate))
