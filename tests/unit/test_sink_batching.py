"""How the sink closes a batch (streams/sink/service.py ``_collect``): as soon as records stop coming
(``linger_ms``), at ``max_batch``, or ``max_wait_ms`` after its first poll — never by waiting out
``max_wait_ms`` while the pipeline is quiet, which once put 200 ms into every read-your-writes wait."""

from __future__ import annotations

from typing import Any

from streams.sink.service import Sink, SinkOptions
from streams.topics import Topics


class _Consumer:
    """Answers each getmany with the next prepared batch (a dict of partition -> records), noting
    the timeouts asked."""

    def __init__(self, *answers: dict[str, list[int]]) -> None:
        self.answers = list(answers)
        self.timeouts: list[int] = []

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[str, list[Any]]:
        self.timeouts.append(timeout_ms)
        answer = self.answers.pop(0) if self.answers else {}
        return {tp: records[:max_records] for tp, records in answer.items()}


def _sink(consumer: _Consumer, **options: Any) -> Sink:
    sink = Sink(None, "127.0.0.1:1", Topics.for_prefix("om"), SinkOptions(**options))  # type: ignore[arg-type]
    sink._consumer = consumer  # type: ignore[assignment]
    return sink


async def test_a_batch_closes_when_the_records_stop_coming() -> None:
    consumer = _Consumer({"p0": [1, 2]}, {"p1": [3]}, {}, {"p0": [4]})
    batch = await _sink(consumer, max_wait_ms=60_000, linger_ms=10)._collect()
    assert batch == [1, 2, 3], "the record after the quiet poll waits for the next batch"
    assert consumer.timeouts[0] > 50_000 and consumer.timeouts[1:] == [10, 10], "waits long only for the first"


async def test_a_batch_closes_at_max_batch() -> None:
    consumer = _Consumer({"p0": [1, 2, 3]}, {"p0": [4, 5, 6]})
    assert await _sink(consumer, max_batch=4, linger_ms=10)._collect() == [1, 2, 3, 4]


async def test_a_quiet_pipeline_gives_an_empty_batch_after_max_wait() -> None:
    consumer = _Consumer()
    assert await _sink(consumer, max_wait_ms=30, linger_ms=10)._collect() == []
    assert consumer.timeouts and all(t <= 30 for t in consumer.timeouts)
