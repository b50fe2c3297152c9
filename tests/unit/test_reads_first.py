"""The embedded engine's one client: a read waits for one call of the sink at most, not its batch,
and reads can slow the sink but never stop it."""

from __future__ import annotations

import threading
import time

from streams.reader.reads_first import ReadsFirst


class Engine:
    """A client whose calls take ``call_s`` each under one unfair lock, as the chDB client's do."""

    def __init__(self, call_s: float) -> None:
        self.call_s, self.lock, self.log = call_s, threading.Lock(), []

    def query(self, name: str) -> None:
        with self.lock:
            time.sleep(self.call_s)  # the engine working
            self.log.append(name)

    insert = command = query


def test_the_sinks_next_call_waits_for_the_read_in_flight() -> None:
    engine, gate = Engine(call_s=0), ReadsFirst(max_yield_s=30)
    sink = gate.writer(engine)
    writer = threading.Thread(target=sink.insert, args=("w",))
    with gate.reading():  # a read has come: it is waiting for the engine, or in it
        writer.start()
        writer.join(0.2)
        assert writer.is_alive() and engine.log == [], "the sink's call went before the read"
        engine.query("read")
    writer.join(10)  # the read done: the sink goes on at once, long before its 30 s bound
    assert not writer.is_alive() and engine.log == ["read", "w"]


def test_reads_in_flight_delay_each_call_of_the_sink_by_the_bound_at_most() -> None:
    engine, gate = Engine(call_s=0), ReadsFirst(max_yield_s=0.02)
    sink = gate.writer(engine)
    with gate.reading():  # a read that never ends
        start = time.monotonic()
        for n in range(5):
            sink.command(f"w{n}")
        assert time.monotonic() - start < 5 * 0.02 + 1.0
    assert engine.log == [f"w{n}" for n in range(5)]
