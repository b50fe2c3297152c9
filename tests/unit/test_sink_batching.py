"""How the sink closes a batch (streams/sink/batches.py, through ``Sink._collect``): as soon as records stop coming
(``linger_ms``), at ``max_batch``, or ``max_wait_ms`` after its first poll — never by waiting out
``max_wait_ms`` while the pipeline is quiet, which once put 200 ms into every read-your-writes wait.
A batch of chat messages alone waits (up to ``max_wait_ms``) for the processor's records of them, so
a lone message and its fold are written in one flush, which starts at once when the fold of every
chat message in it is there (streams/sink/fold_gaps.py). The records are real ones: the sink
converts each as it comes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from processors.config import OMConfig
from processors.machine import decide
from streams.sink import batches
from streams.sink.service import Sink, SinkOptions
from streams.topics import Topics
from tests.unit.machine.core_driver import T0, message

TOPICS = Topics.for_prefix("om")
KEY = b"thread:t"


@dataclass(frozen=True)
class _Record:
    n: int
    topic: str
    value: bytes
    key: bytes = KEY
    partition: int = 0

    @property
    def offset(self) -> int:
        return self.n


def _chat(n: int):
    return message(f"m{n}", T0 + n * 1000, thread="t", resource="r")


def _messages(*ns: int) -> list[_Record]:
    return [_Record(n, TOPICS.messages, _chat(n).to_bytes()) for n in ns]


def _events(*ns: int, of: int | None = None) -> list[_Record]:
    """Status events: the fold of message ``of`` (of a message no batch holds, unless given)."""
    folded = decide(None, _chat(of if of is not None else 1000 + ns[0]), OMConfig()).events
    status = next(e for e in folded if e.type == "status")
    return [_Record(n, TOPICS.events, status.to_bytes()) for n in ns]


class _Consumer:
    """Answers each getmany with the next prepared batch (a dict of partition -> records), noting
    the timeouts asked."""

    def __init__(self, *answers: dict[str, list[_Record]]) -> None:
        self.answers = list(answers)
        self.timeouts: list[int] = []

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[str, list[Any]]:
        self.timeouts.append(timeout_ms)
        answer = self.answers.pop(0) if self.answers else {}
        return {tp: records[:max_records] for tp, records in answer.items()}


def _sink(consumer: _Consumer, **options: Any) -> Sink:
    sink = Sink(None, "127.0.0.1:1", TOPICS, SinkOptions(**options))  # type: ignore[arg-type]
    sink._consumer = consumer  # type: ignore[assignment]
    return sink


async def _collect(consumer: _Consumer, **options: Any) -> list[int]:
    return [r.n for r, _ in await _sink(consumer, **options)._collect()]


async def test_a_batch_closes_when_the_records_stop_coming(monkeypatch) -> None:
    monkeypatch.setattr(batches, "_now", lambda: 1000.0)  # the polls take no time: a loaded machine's do
    consumer = _Consumer({"p0": _events(1, 2)}, {"p1": _events(3)}, {}, {"p0": _events(4)})
    assert await _collect(consumer, max_wait_ms=60_000, linger_ms=10) == [1, 2, 3], \
        "the record after the quiet poll waits for the next batch"
    assert consumer.timeouts[0] > 50_000 and consumer.timeouts[1:] == [10, 10], "waits long only for the first"


async def test_a_batch_closes_at_max_batch() -> None:
    consumer = _Consumer({"p0": _events(1, 2, 3)}, {"p0": _events(4, 5, 6)})
    assert await _collect(consumer, max_batch=4, linger_ms=10) == [1, 2, 3, 4]


async def test_a_quiet_pipeline_gives_an_empty_batch_after_max_wait() -> None:
    consumer = _Consumer()
    assert await _collect(consumer, max_wait_ms=30, linger_ms=10) == []
    assert consumer.timeouts and all(t <= 30 for t in consumer.timeouts)


async def test_chat_messages_alone_wait_for_their_folds_then_linger() -> None:
    consumer = _Consumer({"m0": _messages(1)}, {}, {"m0": _messages(2)}, {"e0": _events(3)}, {}, {"e0": _events(4)})
    assert await _collect(consumer, max_wait_ms=60_000, linger_ms=10) == [1, 2, 3], \
        "a quiet poll after messages alone does not close the batch; one after their fold does"
    assert all(t > 50_000 for t in consumer.timeouts[:4]) and consumer.timeouts[4:] == [10]


async def test_chat_messages_whose_folds_never_come_are_written_after_max_wait() -> None:
    consumer = _Consumer({"m0": _messages(1)})
    assert await _collect(consumer, max_wait_ms=30, linger_ms=10) == [1]
    assert all(t <= 30 for t in consumer.timeouts)


async def test_a_batch_whose_messages_all_have_their_folds_closes_without_lingering() -> None:
    consumer = _Consumer({"m0": _messages(1, 2)}, {"e0": _events(3, of=1)}, {"e0": _events(4, of=2)}, {"e0": _events(5)})
    assert await _collect(consumer, max_wait_ms=60_000, linger_ms=10) == [1, 2, 3, 4], \
        "the batch closes once both messages' folds are in, without asking for more"
    assert len(consumer.timeouts) == 3
    consumer = _Consumer({"e0": _events(1, of=7)}, {"m0": _messages(7)}, {}, {"e0": _events(3)})
    assert await _collect(consumer, max_wait_ms=60_000, linger_ms=10) == [1, 7], "a fold may come before its message"
    assert len(consumer.timeouts) == 2


async def test_a_batch_closes_within_linger_ms_of_its_first_fold_however_busy_the_topics(monkeypatch) -> None:
    """Records arrive every 4 ms (under the 10 ms linger): two chat messages, the fold of the first,
    more folds (another partition's transaction), then the next messages, whose folds (and the second's)
    need the processor's next commit. The batch takes the folds while they keep coming and closes
    within 10 ms of the first, not at max_wait_ms once those folds come or the topics go quiet."""

    clock = {"now": 1000.0}
    monkeypatch.setattr(batches, "_now", lambda: clock["now"])

    class _Busy(_Consumer):
        async def getmany(self, timeout_ms: int, max_records: int) -> dict[str, list[Any]]:
            if timeout_ms < 4:  # the next record comes 4 ms later: after this poll's timeout
                self.timeouts.append(timeout_ms)
                clock["now"] += timeout_ms / 1000
                return {}
            clock["now"] += 0.004
            return await super().getmany(timeout_ms, max_records)

    answers = [{"m0": _messages(1)}, {"m0": _messages(2)}, {"e0": _events(100, of=1)}, {"e1": _events(101)},
               {"e1": _events(102)}, *({"m0": _messages(n)} for n in range(3, 40))]
    consumer = _Busy(*answers)
    assert await _collect(consumer, max_wait_ms=60_000, linger_ms=10) == [1, 2, 100, 101, 102], \
        "the folds that came within 10 ms of the first, not the next messages after them"
    assert len(consumer.timeouts) == 6 and all(t <= 10 for t in consumer.timeouts[3:]), \
        "each poll after the fold waits only for what is left of the 10 ms"


async def test_after_the_folds_a_poll_of_chat_messages_alone_closes_the_batch(monkeypatch) -> None:
    """The processor's records of one commit come in a poll or two; the chat messages after them are
    the next turns', whose folds need the next commit: the batch does not linger on for them."""
    monkeypatch.setattr(batches, "_now", lambda: 1000.0)  # every poll answers at once: a busy topic's do
    consumer = _Consumer({"m0": _messages(1)}, {"e0": _events(100)}, {"e1": _events(101)},
                         {"m0": _messages(2)}, {"m0": _messages(3)}, {"e0": _events(102, of=2)})
    assert await _collect(consumer, max_wait_ms=60_000, linger_ms=10) == [1, 100, 101, 2]
    assert len(consumer.timeouts) == 4
