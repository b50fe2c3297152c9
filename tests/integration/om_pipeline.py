"""Helpers for sink/reader tests: a conversation run through the pure core, published to real topics.

The core (``decide`` + the echo model) produces exactly what the processor publishes — messages,
record deltas, lifecycle events — so the sink and reader can be tested against the core's own
final state without the streaming runtime. Temporal-gap signals the core inserts travel as
``message-inserted`` deltas on the records topic, as the processor publishes them.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from clickhouse_connect.driver.binding import quote_identifier
from clickhouse_connect.driver.client import Client

from processors.config import OMConfig
from processors.context import AgentContext, build_context
from processors.machine import Event, decide, event_key
from processors.machine import KeyState
from schemas.base import WireModel
from schemas.messages import ChatMessage
from streams.clickhouse import connect
from streams.migrate import apply_migrations
from streams.sink import Sink, SinkOptions
from streams.sink.rows import Rows, delta_rows, event_rows, message_rows
from streams.sink.writer import write_batch
from streams.topics import Topics
from tests.unit.machine.core_driver import MINUTE, T0, message
from streams.harness.echo_model import respond

REFLECTIVE = {"observation": {"message_tokens": 1500}, "reflection": {"observation_tokens": 800},
              "temporal_markers": True}
FAST_SINK = {"fetch_max_wait_ms": 20, "session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}


@dataclass
class Conversation:
    config: OMConfig
    messages: list[tuple[str, ChatMessage]] = field(default_factory=list)
    records: list[tuple[str, WireModel]] = field(default_factory=list)
    events: list[tuple[str, WireModel]] = field(default_factory=list)
    states: dict[str, KeyState] = field(default_factory=dict)

    def feed(self, event: Event) -> None:
        """Apply one input like the processor: fold, publish effects, answer jobs at once."""
        pending: list[Event] = [event]
        while pending:
            current = pending.pop(0)
            key = event_key(current, self.config)
            decision = decide(self.states.get(key), current, self.config)
            if decision.state is None:
                self.states.pop(key, None)
            else:
                self.states[key] = decision.state
            self.records.extend((key, d) for d in decision.deltas)
            self.events.extend((key, e) for e in decision.events)
            pending.extend(respond(job) for job in decision.jobs)

    def sunk_turn(self, n: int, offset: int, words: int = 60) -> list[Rows]:
        """Message ``m{n}`` of thread ``t`` (resource ``r``; a user's when ``n`` is even) fed, and the
        records the sink reads for it, in log order: the message at ``offset``, its fold's events,
        then each delta."""
        msg = message(f"m{n}", T0 + n * 60_000, role="user" if n % 2 == 0 else "assistant", thread="t",
                      resource="r", text=" ".join(["words"] * words))
        records, events = len(self.records), len(self.events)
        self.feed(msg)
        return [message_rows(b"thread:t", msg.to_bytes(), offset),
                *[event_rows(k, e.to_bytes(), offset * 100 + i) for i, (k, e) in enumerate(self.events[events:])],
                *[delta_rows(d.model_dump_json().encode()) for _, d in self.records[records:]]]

    def talk(self, count: int, *, thread: str, resource: str, start: int = T0, gap_every: int = 0) -> None:
        at = start
        for i in range(count):
            if gap_every and i and i % gap_every == 0:
                at += 3 * 60 * MINUTE
            at += MINUTE
            msg = message(f"{thread}-m{i}", at, role="user" if i % 2 == 0 else "assistant",
                          thread=thread, resource=resource)
            self.messages.append((event_key(msg, self.config), msg))
            self.feed(msg)


class HoldingInserts:
    """``client`` with every insert into ``table`` held until ``released`` is set (``reached`` is set
    when the first one comes): a write stopped half-way, to look at what was announced before it."""

    def __init__(self, client: Client, table: str, released: threading.Event,
                 reached: threading.Event | None = None) -> None:
        self._client, self._table, self._released = client, table, released
        self.reached = reached if reached is not None else threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _hold(self) -> None:
        self.reached.set()
        assert self._released.wait(30), "the test never let the insert go"

    def insert(self, table: str, *args: Any, **kwargs: Any) -> Any:
        if table == self._table:
            self._hold()
        return self._client.insert(table, *args, **kwargs)

    def command(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        if sql.startswith(f"INSERT INTO {self._table}"):
            self._hold()
        return self._client.command(sql, *args, **kwargs)


def fresh_topics(names: dict[str, str]) -> Topics:
    """A Topics naming the test's fresh topics (the ones the sink does not read get dummy names)."""
    unused = f"unused.{uuid.uuid4().hex[:8]}"
    return Topics(messages=names["messages"], control=unused, jobs=unused, results=unused,
                  events=names["events"], records=names["records"], dlq=names["dlq"])


async def make_topics(new_topic: Callable[..., Awaitable[str]], partitions: int = 2) -> Topics:
    names = {name: await new_topic(partitions=partitions, prefix=f"om.{name}")
             for name in ("messages", "events", "records", "dlq")}
    return fresh_topics(names)


async def publish(bootstrap: str, topics: Topics, conversation: Conversation) -> int:
    """Produce every message, delta and event with the lookup key; returns the record count."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, linger_ms=5)
    await producer.start()
    try:
        sends = [
            *(producer.send(topics.messages, m.to_bytes(), key=k.encode()) for k, m in conversation.messages),
            *(producer.send(topics.records, d.to_bytes(), key=k.encode()) for k, d in conversation.records),
            *(producer.send(topics.events, e.to_bytes(), key=k.encode()) for k, e in conversation.events),
        ]
        futures = await asyncio.gather(*sends)
        await asyncio.gather(*futures)
        return len(futures)
    finally:
        await producer.stop()


def store_rows(client: Client, conversation: Conversation) -> None:
    """The sink's rows written straight into the engine (no broker), deltas first: messages then land
    after a deletion, as a lagging topic would.

    Deltas are encoded with their nulls: ``to_bytes`` drops a resource-scope record's null
    ``thread_id``, which the decoder then requires (a wire-format issue outside the reader).
    """
    write_batch(client, [
        *(delta_rows(d.model_dump_json().encode()) for _, d in conversation.records),
        *(message_rows(k, m.to_bytes(), n, scope=conversation.config.scope)
          for n, (k, m) in enumerate(conversation.messages)),
        *(event_rows(k, e.to_bytes(), n) for n, (k, e) in enumerate(conversation.events)),
    ])


def database_client(clickhouse_dsn: str) -> Client:
    """A client on a fresh database of the session's engine, migrated: tables of this test only."""
    client = connect(f"{clickhouse_dsn}?database=t_{uuid.uuid4().hex[:12]}")
    apply_migrations(client)
    return client


async def sink_until_drained(client: Client, bootstrap: str, topics: Topics, expected: int,
                             *, group: str | None = None, max_batch: int = 500, deadline_s: float = 60.0,
                             scope: str = "thread") -> Sink:
    """Run a sink until its group has committed ``expected`` records, then stop it."""
    sink = Sink(client, bootstrap, topics, SinkOptions(group_id=group or f"sink-{uuid.uuid4().hex[:8]}",
                                                       max_batch=max_batch, max_wait_ms=50, consumer=FAST_SINK,
                                                       scope=scope))
    await sink.start()
    try:
        await wait_committed(bootstrap, sink.options.group_id, topics, expected, deadline_s)
    finally:
        await sink.stop()
    return sink


async def wait_committed(bootstrap: str, group: str, topics: Topics, expected: int, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while (done := await committed_total(bootstrap, group, topics)) < expected:
        if time.monotonic() > deadline:
            raise AssertionError(f"sink committed {done} of {expected} records within {deadline_s} s")
        await asyncio.sleep(0.05)


async def committed_total(bootstrap: str, group: str, topics: Topics) -> int:
    """Sum of the group's committed offsets over the sink's topics (= records it has finished)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    wanted = {topics.messages, topics.records, topics.events}
    return sum(meta.offset for tp, meta in offsets.items() if tp.topic in wanted and meta.offset > 0)


def core_context(conversation: Conversation, thread: str, now_ms: int) -> AgentContext:
    """What the core's own context assembly gives for a thread-scope thread of the conversation."""
    state = conversation.states[f"thread:{thread}"]
    return replace(build_context(state.record.active_observations, list(state.window), now_ms,
                                 meta=state.threads.get(thread), timezone=state.record.observed_timezone),
                   observed_through=state.record.last_observed_at)


# The context rows' version is the sink's clock at each recompute, by design never the same twice;
# the rest of the row must be.
_CLOCKED = {"om_contexts": " EXCEPT (version)"}


def table_dump(client: Client) -> dict[str, list[tuple[Any, ...]]]:
    """Every om_* table's FINAL content, sorted: equal dumps mean equal tables."""
    tables = [row[0] for row in client.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'om\\_%' "
        "AND name != 'om_schema_migrations'").result_rows]
    return {table: sorted(client.query(f"SELECT *{_CLOCKED.get(table, '')} FROM {quote_identifier(table)} FINAL")
                          .result_rows, key=repr)
            for table in tables}


def reflective_conversation(threads: int = 2, messages: int = 120) -> Conversation:
    talk = Conversation(OMConfig.model_validate(REFLECTIVE))
    for n in range(threads):
        talk.talk(messages, thread=f"t{n}", resource=f"r{n % 2}", gap_every=30)
    return talk
