"""Faust's worker consumer with a configurable fetch long-poll instead of its hard-coded 1.5 s.

Faust's aiokafka driver (faust-streaming 0.15.3, ``_create_worker_consumer``) builds its consumer
with ``fetch_max_wait_ms=1500``. aiokafka keeps one fetch in flight per broker, and a fetch for
partitions with nothing new is held by the broker for that long. When recovery ends, the input
partitions are resumed while such a fetch (for the changelog, now read to its end) is held, so the
first input record waits up to 1.5 s behind it — after every start and rebalance. A fetch is
answered as soon as any partition in it has data, so a shorter wait costs only idle polls.

Rule kept: only the one number changes, set on the aiokafka consumer before it starts (aiokafka
reads it when it builds its fetcher in ``start``). The consumer thread built here also carries the
fetch and seek rules of streams/fetch_positions.py and the assignor rule of streams/split_assignor.py,
and records its group member id (streams/group_predecessor.py); the consumer hands records to the
streams by streams/fetch_handoff.py's rule; everything else about the consumer is Faust's. The app's
producer, made by this transport too, commits its partitions' transactions at once
(streams/commit_together.py) and asks for the metadata of the topics it declares only
(streams/declared_topics.py).
"""

from __future__ import annotations

from typing import Any

import faust
from faust.transport.drivers import aiokafka as faust_aiokafka

from streams.commit_together import ProducerCommittingTogether
from streams.declared_topics import DeclaredTopicsTracked
from streams.fetch_handoff import EagerHandoff
from streams.fetch_positions import FetchPositions
from streams.group_predecessor import RecordsMember
from streams.split_assignor import TransactionalAssignor


class _ConsumerThread(FetchPositions, TransactionalAssignor, RecordsMember, faust_aiokafka.AIOKafkaConsumerThread):
    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        consumer._fetch_max_wait_ms = transport.fetch_max_wait_ms
        return consumer


class _Consumer(EagerHandoff, faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> faust_aiokafka.AIOKafkaConsumerThread:
        return _ConsumerThread(self, loop=self.loop, beacon=self.beacon)


class _Producer(DeclaredTopicsTracked, ProducerCommittingTogether):
    pass


class _Transport(faust_aiokafka.Transport):
    Consumer = _Consumer
    Producer = _Producer

    def __init__(self, url: Any, app: faust.App, fetch_max_wait_ms: int) -> None:
        super().__init__(url, app)
        self.fetch_max_wait_ms = fetch_max_wait_ms


def install(app: faust.App, fetch_max_wait_ms: int) -> None:
    """Before the app starts: its transport (the consumer's and the app's producer's) becomes this one."""
    if not app.conf.broker_consumer[0].scheme.startswith("kafka"):
        raise ValueError(f"the fetch-wait patch needs Faust's aiokafka transport, not {app.conf.broker_consumer[0]}")
    app.transport = _Transport(app.conf.broker_consumer, app, fetch_max_wait_ms)
