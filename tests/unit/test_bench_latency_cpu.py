"""The latency benchmark's CPU line (bench/e2e_latency.py): each process's CPU per message and the
cores all of them take at the offered rate, the figure that says whether a shared machine keeps up."""

from __future__ import annotations

from bench.e2e_latency import cpu_line


def test_each_process_per_message_and_all_of_them_in_cores_at_the_rate() -> None:
    line = cpu_line({"processor": 6.0, "llm": 4.0, "broker": 2.5, "bench client": 2.0}, 10_000, 1000)
    assert line == ("CPU per message: processor 0.60 ms, llm 0.40 ms, broker 0.25 ms, bench client 0.20 ms; "
                    "together 1.45 ms = 1.45 cores at 1000/s")
