"""A Faust stream's events in batches, each handed over as soon as no more input waits for it
(issue 19 item 2: the processor's part of a read-your-writes wait).

Faust's ``Stream.take_events(max_, within)`` hands a batch over when it is full or at the next tick of
a ``within`` timer that runs from the previous tick, however early the batch's first event came: a
lone message (an agent's turn on a quiet worker) waited ``within / 2`` on average, ``within`` at
worst, and the timer kept ticking while nothing came. Here, rules this module keeps:

* **Handed over when nothing more waits.** A batch goes to the caller as soon as it holds ``max_``
  events, or the stream's queue is empty (every event delivered so far is in it), or ``within``
  has passed since the caller came back for it (a queue that never empties). The consumer delivers
  a whole fetch to the queue before anything else runs (streams/fetch_handoff.py), so a quiet
  worker's batch is the fetch; under load, the events that arrive while a batch is folded make the
  next one, so batches grow with the load by themselves (a tried variant that filled for ``within``
  whenever events were already waiting made an agent's next message wait 20 ms behind its reply).
* **No timer while idle.** With no event in hand the taker sleeps until one arrives or the stream
  stops.
* **Faust's contract for taking.** Events in order, at most ``max_`` per batch; the stream's own
  acks are off while taking (the caller acks each batch's events; they are acked once more when
  the caller comes back, as Faust's ``take_events`` does: a second ack of an event does nothing); a
  full batch holds up the stream's drainer, so the queue and the consumer's flow control push back
  as with Faust's buffer. On exit the acks setting and the stream's processors are restored.
* It uses what Faust's own ``take_events`` uses (faust-streaming 0.15.3): ``add_processor``,
  ``_enable_passive``, ``current_event``, ``enable_acks``, ``_active_agens``. The pipeline, kill -9,
  broker-restart and cluster tests run the processor through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from faust.types import EventT, StreamT


def take_eagerly(stream: StreamT, max_: int, within: float) -> AsyncGenerator[list[EventT], None]:
    """Batches of ``stream``'s events (see the module's rules)."""
    batches = _batches(stream, max_, within)
    stream._active_agens.add(batches)  # type: ignore[attr-defined] # closed with the stream, as Faust's takers are
    return batches


async def _batches(stream: Any, max_: int, within: float) -> AsyncGenerator[list[EventT], None]:
    events: list[EventT] = []
    arrived = asyncio.Event()  # an event joined ``events``
    room = asyncio.Event()  # a batch was handed over: a full ``events`` has room again
    queue = stream.channel.queue
    loop = asyncio.get_running_loop()

    async def collect(value: Any) -> Any:
        """The stream's processor: each value's event joins the batch in the making."""
        while len(events) >= max_:
            room.clear()
            await stream.wait(room)
            if stream.should_stop:
                return value
        event = stream.current_event
        if event is None:
            raise RuntimeError("a value reached the batch without its event")
        events.append(event)
        arrived.set()
        return value

    acks_were = stream.enable_acks
    stream.enable_acks = False
    stream.add_processor(collect)
    stream._enable_passive(stream.channel.__aiter__())
    try:
        while not stream.should_stop:
            if not events:
                arrived.clear()
                await stream.wait_for_stopped(arrived)
                continue
            deadline = loop.time() + within
            while len(events) < max_ and not queue.empty() and loop.time() < deadline and not stream.should_stop:
                arrived.clear()
                await stream.wait_for_stopped(arrived, timeout=deadline - loop.time())
            batch = events[:max_]
            del events[:len(batch)]
            room.set()
            try:
                yield batch
            finally:
                for event in batch:
                    await stream.ack(event)
    finally:
        stream.enable_acks = acks_were
        stream._processors.remove(collect)
