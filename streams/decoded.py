"""Records this process already holds decoded: the embedded sink takes what the fold read or wrote.

In the embedded worker the sink reads, from a consumer of its own, the very records the fold has
just read (chat messages) or written (events, deltas), and decoded each again — and re-encoded each
event for its payload column: ~7 % of the processor's interpreter time at 1,000 messages/s (py-spy),
on the thread whose loop also serves Kafka. The fold leaves each record it decoded or encoded here,
keyed by its bytes; the sink takes it out instead of decoding. A chat message is read by both from
the messages topic, the sink often first: whichever decodes it leaves it for the other.

Rules this module keeps:

* **Keyed by the record's exact bytes.** Decoding is a pure function of them, so what one side takes
  is what its own decoding would give: a message the other decoded from these bytes, an event or
  delta the fold encoded to them (the schemas round-trip exactly: tests/unit/test_schema_round_trips.py).
  An event's payload column is then the record's bytes, which are its encoding.
* **Nothing is kept that no one takes**: off unless this process runs the sink
  (:func:`streams.embedded_storage.start` turns it on); with the roles split or a ClickHouse server the
  sink is another process and the fold leaves nothing.
* **Bounded**: at most ``capacity`` records, the oldest pushed out first. A record the sink never
  reads (an aborted transaction's) only waits to be pushed out; one pushed out before the sink
  reads it is decoded there as before.
* What is left here is not changed afterwards: the fold treats decoded and emitted models as values.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Literal, TypeVar

T = TypeVar("T")
Kind = Literal["message", "event", "delta"]  # the topic the record is on: messages, events, records

CAPACITY = 8_192  # ~3 records a message; the sink reads them within a gather (OM_SINK_GATHER_MS) or two


class Decoded:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.on = False
        self._items: OrderedDict[bytes, tuple[Kind, object]] = OrderedDict()

    def leave(self, kind: Kind, value: bytes, model: object) -> None:
        """``model`` is what ``value``, a record of ``kind``, decodes to (the fold decoded or encoded it)."""
        if not self.on:
            return
        self._items[value] = (kind, model)
        if len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def take(self, kind: Kind, value: bytes | None) -> object | None:
        """What ``value`` decodes to if the fold left it here as a record of ``kind``; else None."""
        if not self._items or value is None:
            return None
        found = self._items.pop(value, None)
        return found[1] if found is not None and found[0] == kind else None

    def shared(self, kind: Kind, value: bytes, decode: Callable[[bytes], T]) -> T:
        """What ``value`` decodes to: the other side's decoding if it left one, else ``decode``'s, left
        for the other side (the embedded worker's fold and sink both read the messages topic)."""
        model = self.take(kind, value)
        if model is None:
            model = decode(value)
            self.leave(kind, value, model)
        return model  # type: ignore[return-value]

    def clear(self) -> None:
        self._items.clear()


DECODED = Decoded()
