"""Issue 26: a dead broker is logged once when it goes, once a minute while gone, once when back —
at WARNING — while every other record (the worker's own progress) passes untouched."""

from __future__ import annotations

import logging

from aiokafka.errors import KafkaConnectionError, NodeNotReadyError, NotEnoughReplicasError

from streams.broker_log import BrokerLossHandler, broker_failure
from streams.logs import JsonFormatter

REFUSED = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 59092)")


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def record(name: str, level: int, msg: str, args: tuple, at: float) -> logging.LogRecord:
    return logging.makeLogRecord({"name": name, "levelno": level, "levelname": logging.getLevelName(level),
                                  "msg": msg, "args": args, "created": at})


def node_down(at: float) -> logging.LogRecord:
    return record("aiokafka.client", logging.ERROR, "Unable connect to node with id %s: %s", (1, REFUSED), at)


def progress(at: float) -> logging.LogRecord:
    return record("streams.worker", logging.INFO, "om.job.done", (), at)


def test_three_minutes_of_errors_about_one_dead_node_become_four_warnings() -> None:
    out = Collect()
    handler = BrokerLossHandler(out)
    at = 1000.0
    for step in range(3 * 60 * 3):  # three failures a second for three minutes, the worker logging too
        handler.handle(node_down(at + step / 3))
        if step % 30 == 0:
            handler.handle(progress(at + step / 3))
    handler.handle(progress(at + 180 + 20))  # the broker is back: no failure for 20 s
    about_broker = [r for r in out.records if r.name == "streams.kafka.brokers"]
    assert [r.getMessage() for r in about_broker] == [
        "kafka.broker.down", "kafka.broker.still_down", "kafka.broker.still_down", "kafka.broker.back"]
    assert {r.levelname for r in about_broker} == {"WARNING"}
    assert {r.broker for r in about_broker} == {"127.0.0.1:59092"}  # type: ignore[attr-defined]
    down, first, second, back = about_broker
    assert down.reason == "ConnectionRefusedError"  # type: ignore[attr-defined]
    assert first.failures == 180 and second.failures == 180  # type: ignore[attr-defined]
    assert first.down_s == 60.0 and second.down_s == 120.0  # type: ignore[attr-defined]
    assert back.failures == 540  # type: ignore[attr-defined]
    progress_lines = [r for r in out.records if r.name == "streams.worker"]
    assert len(progress_lines) == 18 + 1  # every progress record passed
    assert out.records[-2] is back and out.records[-1].name == "streams.worker"  # "back" first, then the line


def test_the_folded_lines_render_as_json() -> None:
    out = Collect()
    handler = BrokerLossHandler(out)
    handler.handle(node_down(5.0))
    line = JsonFormatter().format(out.records[0])
    assert '"event":"kafka.broker.down"' in line and '"broker":"127.0.0.1:59092"' in line


def test_which_aiokafka_records_count_as_a_dead_broker() -> None:
    assert broker_failure(record("aiokafka.client", logging.ERROR, 'Unable connect to "%s:%s": %s',
                                 ("127.0.0.1", 59092, REFUSED), 1)) == ("127.0.0.1:59092", None,
                                                                        "ConnectionRefusedError")
    assert broker_failure(node_down(1)) == ("127.0.0.1:59092", "1", "ConnectionRefusedError")
    assert broker_failure(record("aiokafka.producer.sender", logging.WARNING, "Cannot send %r to %s: %r",
                                 (object, 2, NodeNotReadyError()), 1)) == (None, "2", "NodeNotReadyError")
    assert broker_failure(record("aiokafka.consumer.fetcher", logging.ERROR, "Failed fetch messages from %s: %s",
                                 (3, KafkaConnectionError("Connection at 10.0.0.3:9092 closed")), 1)) == (
        "10.0.0.3:9092", "3", "KafkaConnectionError")
    assert broker_failure(record("aiokafka.client", logging.ERROR, "Unable to update metadata from %s",
                                 ([1],), 1)) == (None, "1", "metadata update failed")
    assert broker_failure(record("aiokafka.producer.sender", logging.WARNING,
                                 "Got error produce response on topic-partition %s, retrying. Error: %s",
                                 ("om.messages-0", NotEnoughReplicasError), 1)) == (None, None,
                                                                                    "NotEnoughReplicasError")


def test_a_node_id_is_named_by_the_address_learnt_for_it_and_anonymous_failures_join_the_dead_broker() -> None:
    out = Collect()
    handler = BrokerLossHandler(out)
    handler.handle(node_down(1))
    handler.handle(record("aiokafka.client", logging.ERROR, "Unable to update metadata from %s", ([1],), 2))
    handler.handle(record("aiokafka.producer.sender", logging.WARNING, "Got error produce response: %s",
                          (NodeNotReadyError(),), 3))
    assert [(r.getMessage(), r.broker) for r in out.records] == [  # type: ignore[attr-defined]
        ("kafka.broker.down", "127.0.0.1:59092")]


def test_other_records_are_left_alone() -> None:
    out = Collect()
    handler = BrokerLossHandler(out)
    kept = [
        record("aiokafka.consumer.fetcher", logging.WARNING, "Not authorized to read from topic %s.", ("t",), 1),
        record("aiokafka.client", logging.DEBUG, "Unable connect to node with id %s: %s", (1, REFUSED), 2),
        record("streams.sink", logging.ERROR, "sink.insert.failed", (), 3),
        record("aiokafka.producer.sender", logging.ERROR, "Unexpected error in sender routine", (), 4),
    ]
    for one in kept:
        handler.handle(one)
    assert out.records == kept


def test_two_brokers_are_tracked_apart() -> None:
    out = Collect()
    handler = BrokerLossHandler(out, quiet_s=15)
    other = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 59094)")
    for second in range(30):
        handler.handle(node_down(second))
        if second < 5:
            handler.handle(record("aiokafka.client", logging.ERROR, "Unable connect to node with id %s: %s",
                                  (3, other), second))
    events = [(r.getMessage(), r.broker) for r in out.records]  # type: ignore[attr-defined]
    assert events == [("kafka.broker.down", "127.0.0.1:59092"), ("kafka.broker.down", "127.0.0.1:59094"),
                      ("kafka.broker.back", "127.0.0.1:59094")]


def test_a_failure_naming_no_broker_waits_briefly_for_one_that_does() -> None:
    out = Collect()
    handler = BrokerLossHandler(out, naming_s=2)
    not_leader = ("Got error produce response on topic-partition %s, retrying. Error: %s",
                  ("om.messages-1", NotEnoughReplicasError))
    handler.handle(record("aiokafka.producer.sender", logging.WARNING, *not_leader, 10.0))
    handler.handle(node_down(10.5))  # names the broker: one line, for it
    handler.handle(record("aiokafka.producer.sender", logging.WARNING, *not_leader, 40.0))  # a later election
    handler.handle(progress(43.0))
    assert [(r.getMessage(), getattr(r, "broker", None)) for r in out.records] == [
        ("kafka.broker.down", "127.0.0.1:59092"), ("kafka.broker.back", "127.0.0.1:59092"),
        ("kafka.broker.down", "cluster"), ("om.job.done", None)]
    assert out.records[2].created == 40.0
