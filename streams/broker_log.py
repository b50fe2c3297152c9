"""A dead broker in the log: one line when it goes, one a minute while it stays gone, one when back.

aiokafka logs every failed connect, fetch and send to an unreachable node, at ERROR or WARNING,
several times a second (issue 26 counted 514 lines in 3 minutes for one node). The handler that
:func:`streams.logs.configure` installs passes every record through :class:`BrokerLossHandler`,
which folds those records, per broker, into three WARNING events:

* ``kafka.broker.down`` — the first failure about a broker, with its reason;
* ``kafka.broker.still_down`` — at most once per ``every_s`` (60 s) while failures keep coming, with
  how many were folded since the last line and how long the broker has been gone;
* ``kafka.broker.back`` — once no failure about it came for ``quiet_s`` (15 s). aiokafka logs nothing
  when a connection succeeds, so this is noticed at the next record the process logs, whatever it is.

Everything else — the worker's own progress, other aiokafka warnings, anything with a traceback —
passes untouched and in order. Time is the records' own ``created``, so tests need no clock.
A broker is named by its address (``127.0.0.1:19092``; a node id is mapped to the address an earlier
record gave it), else ``node <id>``. A failure naming no broker (``NotLeaderForPartition`` on a
topic-partition) counts for the broker already down; with none down it waits ``naming_s`` (2 s) for
a record that names one, and is announced as ``cluster`` if none does.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from aiokafka.errors import KafkaError

from streams.services.kafka_retry import is_transient

# aiokafka's messages about an unreachable node that carry no exception object
_FAILURE_TEMPLATES = frozenset({"Unable to update metadata from %s"})
_ADDRESS = re.compile(r"\('([\w.\-:]+)', (\d+)\)|\b([\w\-]+(?:\.[\w\-]+)+|localhost):(\d{2,5})\b")
_NODE = re.compile(r"\b(?:node(?: with)?(?: id)?|from|to) \[?(\d+)\b")


@dataclass
class _Down:
    since: float
    last_failure: float
    last_line: float
    reason: str
    folded: int = 0
    total: int = 1


class BrokerLossHandler(logging.Handler):
    """Forwards records to ``target``, folding aiokafka's broker-failure records as described above."""

    def __init__(self, target: logging.Handler, every_s: float = 60.0, quiet_s: float = 15.0,
                 naming_s: float = 2.0) -> None:
        super().__init__()
        self.target, self.every_s, self.quiet_s, self.naming_s = target, every_s, quiet_s, naming_s
        self._down: dict[str, _Down] = {}
        self._addresses: dict[str, str] = {}  # node id -> host:port
        self._unnamed: _Down | None = None  # failures naming no broker, while none is known down

    def emit(self, record: logging.LogRecord) -> None:
        now = record.created
        self._sweep(now)
        found = broker_failure(record)
        if found is None:
            self.target.handle(record)
            return
        address, node, reason = found
        broker = self._broker_name(address, node)
        if broker is None:  # wait up to naming_s for a record that names the broker
            if self._unnamed is None:
                self._unnamed = _Down(since=now, last_failure=now, last_line=now, reason=reason)
            else:
                self._unnamed.last_failure = now
                self._unnamed.total += 1
            return
        down = self._down.get(broker)
        if down is None:
            down = self._down[broker] = _Down(since=now, last_failure=now, last_line=now, reason=reason)
            if self._unnamed is not None:
                down.since, down.total, self._unnamed = self._unnamed.since, self._unnamed.total + 1, None
            self._forward("kafka.broker.down", now, broker=broker, reason=reason)
            return
        down.last_failure, down.reason = now, reason
        down.folded += 1
        down.total += 1
        if now - down.last_line >= self.every_s:
            self._forward("kafka.broker.still_down", now, broker=broker, failures=down.folded,
                          down_s=round(now - down.since, 1), reason=reason)
            down.last_line, down.folded = now, 0

    def _sweep(self, now: float) -> None:
        """Announce unnamed failures as ``cluster`` once no record named a broker for them, and
        brokers quiet for ``quiet_s`` as back."""
        unnamed = self._unnamed
        if unnamed is not None and now - unnamed.since >= self.naming_s:
            self._unnamed = None
            self._down["cluster"] = unnamed
            self._forward("kafka.broker.down", unnamed.since, broker="cluster", reason=unnamed.reason)
        for broker, down in list(self._down.items()):
            if now - down.last_failure >= self.quiet_s:
                del self._down[broker]
                self._forward("kafka.broker.back", now, broker=broker, failures=down.total,
                              down_s=round(down.last_failure - down.since, 1))

    def _broker_name(self, address: str | None, node: str | None) -> str | None:
        """The broker's address when known (learnt from records naming both), else ``node <id>``; a
        failure naming no broker is about the one already down, else None (not known yet)."""
        if address is not None and node is not None:
            self._addresses[node] = address
        if address is None and node is not None:
            address = self._addresses.get(node)
        if address is not None:
            return address
        if node is not None:
            return f"node {node}"
        return next(iter(self._down), None)

    def _forward(self, event: str, at: float, **fields: object) -> None:
        self.target.handle(logging.makeLogRecord({"name": "streams.kafka.brokers", "msg": event, "created": at,
                                                  "levelno": logging.WARNING, "levelname": "WARNING", **fields}))


def broker_failure(record: logging.LogRecord) -> tuple[str | None, str | None, str] | None:
    """``(address, node id, reason)`` when ``record`` is aiokafka reporting an unreachable or
    unready node; address and node id are None when the record does not name them."""
    if not record.name.startswith("aiokafka") or record.levelno < logging.WARNING or record.exc_info:
        return None
    args = record.args if isinstance(record.args, tuple) else ()
    errors = [arg for arg in args if isinstance(arg, BaseException)
              or (isinstance(arg, type) and issubclass(arg, BaseException))]  # aiokafka logs some as classes
    if record.msg not in _FAILURE_TEMPLATES and not any(_transient(error) for error in errors):
        return None
    text = record.getMessage()
    found = _ADDRESS.search(text)
    address = None
    if found is not None:
        address = f"{found.group(1)}:{found.group(2)}" if found.group(1) else f"{found.group(3)}:{found.group(4)}"
    node = _NODE.search(text)
    return address, node.group(1) if node else None, _name(errors[0]) if errors else "metadata update failed"


def _transient(error: BaseException | type[BaseException]) -> bool:
    if isinstance(error, type):
        return issubclass(error, KafkaError) and bool(error.retriable)
    return is_transient(error)


def _name(error: BaseException | type[BaseException]) -> str:
    return error.__name__ if isinstance(error, type) else type(error).__name__
