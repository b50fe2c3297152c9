"""streams/sdk/client.py ``send_and_context``: the read (or the wait for the message's fold) runs while
the send waits for its acknowledgement, the context shows the sent message, and a failed send
returns no context.

The broker and the reader are stand-ins here (what each answers is the point, not the transport);
tests/integration/test_sdk.py drives the same call through a real worker."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from processors.context import AgentContext
from schemas.messages import ChatMessage, TextPart
from streams.reader.models import ContextResponse
from streams.sdk import OMClient, SyncOMClient
from streams.sdk.reader import ReaderError
from streams.settings import Settings

DEADLINE_S = 5.0


def _message(mid: str, text: str) -> ChatMessage:
    return ChatMessage(id=mid, thread_id="t", resource_id="r", role="user", created_at=1_767_600_000_000,
                       parts=[TextPart(text=text)])


def _client() -> OMClient:
    return OMClient(Settings(kafka_bootstrap="127.0.0.1:9", config_file=None), scope="thread", token="x",
                    reader_url="http://127.0.0.1:9")


@pytest.mark.parametrize("wait", [False, True])
async def test_the_read_runs_while_the_send_waits_and_the_context_shows_the_message(monkeypatch: Any,
                                                                                    wait: bool) -> None:
    client = _client()
    read_started = asyncio.Event()
    acknowledged: list[str] = []
    awaited: list[str | None] = []

    async def deliver(topic: str, records: list[tuple[bytes, bytes]]) -> None:
        await asyncio.wait_for(read_started.wait(), DEADLINE_S)  # sent one after the other, this never returns
        acknowledged.append(topic)

    async def context(thread_id: str, resource_id: str | None, *, wait_for_message_id: str | None,
                      timeout: float) -> ContextResponse:
        read_started.set()
        awaited.append(wait_for_message_id)
        return ContextResponse.of(thread_id, resource_id or "r", AgentContext(system=["notes"]))

    monkeypatch.setattr(client.delivery, "deliver", deliver)
    monkeypatch.setattr(client.reader, "context", context)
    sent = _message("m1", "book the table for Friday")
    answer = await client.send_and_context(sent, wait=wait)
    assert acknowledged and answer.system == ["notes"] and awaited == (["m1"] if wait else [None])
    assert [m.id for m in answer.messages] == ["m1"] and answer.own_messages == ["m1"]
    assert answer.chat[-1].content == "book the table for Friday"


async def test_a_new_thread_gets_the_context_its_own_message_makes(monkeypatch: Any) -> None:
    client = _client()

    async def deliver(topic: str, records: list[tuple[bytes, bytes]]) -> None:
        return None

    async def context(thread_id: str, resource_id: str | None, **_: Any) -> ContextResponse:
        raise ReaderError(404, "thread not found")  # the pipeline has not materialised the thread yet

    monkeypatch.setattr(client.delivery, "deliver", deliver)
    monkeypatch.setattr(client.reader, "context", context)
    answer = await client.send_and_context(_message("m1", "hello"))
    assert [m.id for m in answer.messages] == ["m1"] and answer.resource_id == "r"


async def test_a_failed_send_raises_drops_its_read_and_remembers_nothing(monkeypatch: Any) -> None:
    client = _client()
    read_ended: list[str] = []

    async def deliver(topic: str, records: list[tuple[bytes, bytes]]) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("the broker refused the record")

    async def context(thread_id: str, resource_id: str | None, **_: Any) -> ContextResponse:
        try:
            await asyncio.sleep(DEADLINE_S)
            raise AssertionError("the read outlived its failed send")
        except asyncio.CancelledError:
            read_ended.append("cancelled")
            raise

    monkeypatch.setattr(client.delivery, "deliver", deliver)
    monkeypatch.setattr(client.reader, "context", context)
    with pytest.raises(RuntimeError, match="refused"):
        await client.send_and_context(_message("m1", "hello"))
    assert read_ended == ["cancelled"] and client.own_writes.sent_as("t", "r") is None


async def test_a_read_that_fails_otherwise_raises_once_the_send_is_acknowledged(monkeypatch: Any) -> None:
    client = _client()

    async def deliver(topic: str, records: list[tuple[bytes, bytes]]) -> None:
        return None

    async def context(thread_id: str, resource_id: str | None, **_: Any) -> ContextResponse:
        raise ReaderError(503, "ClickHouse is not reachable")

    monkeypatch.setattr(client.delivery, "deliver", deliver)
    monkeypatch.setattr(client.reader, "context", context)
    with pytest.raises(ReaderError, match="503"):
        await client.send_and_context(_message("m1", "hello"))
    assert client.own_writes.sent_as("t", "r") == "r", "the message was sent: it stays this client's own"


def test_the_blocking_twin_sends_and_reads_in_one_call(monkeypatch: Any) -> None:
    with SyncOMClient(Settings(kafka_bootstrap="127.0.0.1:9", config_file=None), scope="thread", token="x",
                      reader_url="http://127.0.0.1:9") as om:
        async def deliver(topic: str, records: list[tuple[bytes, bytes]]) -> None:
            return None

        async def context(thread_id: str, resource_id: str | None, **_: Any) -> ContextResponse:
            return ContextResponse.of(thread_id, resource_id or "r", AgentContext(system=["notes"]))

        monkeypatch.setattr(om.client.delivery, "deliver", deliver)
        monkeypatch.setattr(om.client.reader, "context", context)
        answer = om.send_and_context(_message("m1", "hello"))
    assert answer.system == ["notes"] and [m.id for m in answer.messages] == ["m1"]
