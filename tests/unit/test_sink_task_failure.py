"""Issue 18 item 1: a sink whose loop dies says so, and is never left idle in its consumer group.

Today's failure: the embedded sink's task died on an oversized dead letter, nobody awaited it, and
its consumer stayed in the group with the partitions frozen for every tenant.
"""

from __future__ import annotations

from typing import Any

import pytest

from streams import embedded_storage
from streams.sink import service
from streams.sink.service import Sink
from streams.topics import Topics


class _Idle:
    async def stop(self) -> None:
        return None


async def test_the_failure_that_ends_the_loop_reaches_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    async def connected(*_: Any) -> tuple[_Idle, _Idle]:
        return _Idle(), _Idle()

    async def broken(self: Sink) -> list:
        raise RuntimeError("the broker refused a record")

    monkeypatch.setattr(service, "start_when_reachable", connected)
    monkeypatch.setattr(Sink, "_collect", broken)
    heard: list[BaseException] = []
    sink = Sink(None, "127.0.0.1:1", Topics.for_prefix("om"))  # type: ignore[arg-type]
    await sink.start(on_failure=heard.append)
    with pytest.raises(RuntimeError):
        await sink.wait()
    assert [type(e) for e in heard] == [RuntimeError]


def test_the_embedded_worker_restarts_in_place_when_its_sink_dies(monkeypatch: pytest.MonkeyPatch) -> None:
    restarts: list[tuple[str, dict]] = []
    monkeypatch.setattr(embedded_storage, "restart_in_place", lambda event, **details: restarts.append((event, details)))
    embedded_storage._restart_on_sink_failure(RuntimeError("secret message text"))
    assert restarts == [("om.embedded.sink_failed", {"error": "RuntimeError"})], "the cause, never the text"
