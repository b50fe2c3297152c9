"""``python -m bench`` (``make bench``): run every benchmark, print the figures, put them in RESULTS.md.

Only the figure blocks of the sections run change there (bench/report_merge.py); the prose stays.

Sizes are options so a slower or faster machine can scale them; the defaults keep a full run
around ten minutes on two cores. The pipeline benchmarks need the local broker, which is started
here the way ``om services up`` starts it if it is not already running.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import shlex
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench.report_merge import merged
from bench import (agent_turn, agent_waiting, changelog_bytes, core_throughput, e2e_latency, machine, memory, pipeline_throughput,
                   reader_latency, reader_status, replay, restart, scaling, state_recovery, waste)
from bench.worker import BOOTSTRAP
from streams.services import commands
from streams.services.kafka_health import is_healthy

RESULTS = Path(__file__).with_name("RESULTS.md")


def _reader(args: argparse.Namespace) -> None:
    dsn = f"chdb://{tempfile.mkdtemp(prefix='om-bench-')}"
    asyncio.run(reader_latency.main(dsn, args.reader_repeat))
    asyncio.run(reader_status.main(dsn, args.status_threads, args.reader_repeat))


SECTIONS: dict[str, tuple[str, Callable[[argparse.Namespace], object]]] = {
    "core": ("1a. Processor throughput: the core vs the tokenizer bound",
             lambda a: core_throughput.main(a.core_threads, a.core_per_thread)),
    "pipeline": ("1b. Processor throughput: the real Faust worker vs the core",
                 lambda a: asyncio.run(pipeline_throughput.main(
                     [(a.pipeline_threads, a.pipeline_per_thread), (a.long_threads, a.long_per_thread),
                      (a.many_threads, a.many_per_thread)]))),
    "changelog": ("1c. Changelog bytes per message, short and long threads",
                  lambda a: changelog_bytes.main([(a.pipeline_threads, a.pipeline_per_thread),
                                                  (a.long_threads, a.long_per_thread)])),
    "latency": ("2. End-to-end latency at a fixed offered load",
                lambda a: asyncio.run(e2e_latency.main(a.rate, a.seconds, a.latency_threads))),
    "restart": ("2b. Back to work after a restart or a rebalance",
                lambda a: asyncio.run(restart.main(a.restart_threads, a.restart_per_thread))),
    "waiting": ("3. Agent waiting with a slow model",
                lambda a: agent_waiting.main(a.waiting_messages, a.model_latency_ms, a.gaps)),
    "reader": ("4. Reader: context() and status() latency", _reader),
    "replay": ("5. Replay throughput", lambda a: asyncio.run(replay.main(a.replay_messages))),
    "memory": ("6. Memory per key state", lambda a: memory.main(a.keys)),
    "recovery": ("6b. Recovering many keys from the changelog",
                 lambda a: asyncio.run(state_recovery.main(a.recovery_keys))),
    "waste": ("7. Waste: Observer input per conversation token",
              lambda a: waste.main(a.waste_messages, a.model_latency_ms, a.waste_gap)),
    "turn": ("8. The agent's turn: send the user message, read the context that includes it",
             lambda a: asyncio.run(agent_turn.main(a.turn_threads, a.turns, [1, a.turn_concurrency]))),
    "scaling": ("9. Scaling with workers: 1, 2, 3 workers on 12 partitions",
                lambda a: asyncio.run(scaling.main(a.scaling_workers, a.scaling_threads, a.scaling_per_thread))),
}
NEEDS_BROKER = {"pipeline", "latency", "restart", "replay", "turn", "scaling"}


class _Tee(io.StringIO):
    """Keeps what a benchmark prints for the report while it still reaches the terminal."""

    def write(self, text: str) -> int:
        sys.__stdout__.write(text)
        sys.__stdout__.flush()
        return super().write(text)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=list(SECTIONS), default=list(SECTIONS))
    p.add_argument("--output", type=Path, default=RESULTS, help="where the markdown report goes")
    p.add_argument("--core-threads", type=int, default=10)
    p.add_argument("--core-per-thread", type=int, default=2_000)
    p.add_argument("--pipeline-threads", type=int, default=20)
    p.add_argument("--pipeline-per-thread", type=int, default=250)
    p.add_argument("--long-threads", type=int, default=4, help="the long-thread pipeline run (state size grows)")
    p.add_argument("--long-per-thread", type=int, default=2_000)
    p.add_argument("--many-threads", type=int, default=100, help="the pipeline run with the agent-turn workload's many keys")
    p.add_argument("--many-per-thread", type=int, default=60)
    p.add_argument("--rate", type=float, default=20.0, help="offered load, messages/s")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--latency-threads", type=int, default=10)
    p.add_argument("--restart-threads", type=int, default=100, help="threads folded before the restarts")
    p.add_argument("--restart-per-thread", type=int, default=3)
    p.add_argument("--waiting-messages", type=int, default=5_000)
    p.add_argument("--model-latency-ms", type=int, default=2_000, help="slow model, in event time")
    p.add_argument("--gaps", type=lambda s: [float(g) for g in s.split(",")], default=[0.2, 1, 2, 10],
                   help="seconds between messages, comma-separated")
    p.add_argument("--reader-repeat", type=int, default=200)
    p.add_argument("--status-threads", type=int, default=1_000)
    p.add_argument("--replay-messages", type=int, default=20_000)
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--recovery-keys", type=int, default=1_000_000)
    p.add_argument("--waste-messages", type=int, default=2_000)
    p.add_argument("--waste-gap", type=float, default=2.0, help="seconds between messages")
    p.add_argument("--turn-threads", type=int, default=32)
    p.add_argument("--turns", type=int, default=10)
    p.add_argument("--turn-concurrency", type=int, default=32)
    p.add_argument("--scaling-workers", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 3])
    p.add_argument("--scaling-threads", type=int, default=48)
    p.add_argument("--scaling-per-thread", type=int, default=60)
    return p.parse_args(argv)


def run(name: str, args: argparse.Namespace) -> tuple[str, bool]:
    """The section's printed figures (or its failure), and whether it succeeded."""
    title, bench = SECTIONS[name]
    print(f"\n## {title}\n", flush=True)
    out = _Tee()
    start = time.monotonic()
    with contextlib.redirect_stdout(out):
        try:
            bench(args)
            ok = True
        except Exception:
            print(f"FAILED:\n{traceback.format_exc()}")
            ok = False
    print(f"({time.monotonic() - start:.0f} s)", flush=True)
    return f"## {title}\n\n```\n{out.getvalue().rstrip()}\n```\n", ok


def report(args: argparse.Namespace, argv: list[str], sections: list[str], seconds: float) -> str:
    command = " ".join(["python -m bench", *map(shlex.quote, argv)])
    return "\n".join([
        "# Benchmark results",
        "",
        "Figures from one run of `make bench`; every figure is printed next to a baseline measured in",
        "the same run, and the ratio is what compares across machines. Benchmarks are not tests.",
        "",
        *(f"* {line}" for line in machine.description()),
        f"* command: `{command}` ({seconds / 60:.1f} min)",
        "",
        "To reproduce: `make bench` (installs, starts the local broker if needed, runs everything and",
        "writes its figures into this file, keeping the prose), or `.venv/bin/python -m bench --only <section …> [sizes]`;",
        "`.venv/bin/python -m bench --help` lists the sizes and their defaults.",
        "",
        *sections,
    ])


def main(argv: list[str]) -> int:
    args = parse(argv)
    if NEEDS_BROKER & set(args.only) and not is_healthy(BOOTSTRAP):
        commands.up()
    start = time.monotonic()
    results = [run(name, args) for name in args.only]
    sections = [text for text, _ in results]
    if args.output.exists():  # the figures of the sections run; everything else, and all prose, stays
        args.output.write_text(merged(args.output.read_text(), sections))
    else:
        args.output.write_text(report(args, argv, sections, time.monotonic() - start))
    print(f"\nwrote {args.output}")
    return 0 if all(ok for _, ok in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
