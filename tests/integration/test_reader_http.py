"""The reader's HTTP service: tokens bound to resources, nothing of another tenant ever leaves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import quote

import aiohttp
import orjson
import pytest

from processors.config import OMConfig
from streams.reader.api import Reader
from streams.reader.models import ContextResponse
from streams.reader.serve import start_reader
from streams.settings import Settings
from tests.integration.om_pipeline import (REFLECTIVE, Conversation, core_context, database_client, make_topics, publish,
                                          sink_until_drained)
from tests.unit.machine.core_driver import T0

pytestmark = pytest.mark.integration
TOKENS = {"owner-token": ["r-owner"], "thief-token": ["r-thief"], "both-token": ["r-owner", "r-thief"]}
CRAFTED = ["owned' OR '1'='1", "owned\\' --", "%", "owned%00", "owned\"; DROP TABLE om_messages; --", "../owned"]


@pytest.fixture
async def service(kafka_bootstrap, clickhouse_dsn, new_topic) -> AsyncIterator[tuple[str, Conversation]]:
    config = OMConfig.model_validate(REFLECTIVE)
    talk = Conversation(config)
    talk.talk(60, thread="owned", resource="r-owner")
    talk.talk(3, thread="theirs", resource="r-thief")
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, talk)
    client = database_client(clickhouse_dsn)
    await sink_until_drained(client, kafka_bootstrap, topics, total)
    settings = Settings(clickhouse_dsn=clickhouse_dsn, reader_port=0, reader_tokens=TOKENS)
    runner = await start_reader(client, settings, config)
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}", talk
    finally:
        await runner.cleanup()


async def get(url: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        return response.status, await response.text()


def secrets_of(talk: Conversation, thread: str) -> list[str]:
    """Strings that must never appear in a refused answer: the thread's message ids and texts."""
    messages = [m for _, m in talk.messages if m.thread_id == thread]
    return [m.id for m in messages] + [m.parts[0].text[:40] for m in messages]


async def test_owner_reads_the_context_the_core_computes(service) -> None:
    base, talk = service
    async with aiohttp.ClientSession() as session:
        url = f"{base}/v1/threads/owned/context?resource_id=r-owner&wait_for_message_id=owned-m59"
        async with session.get(url, headers={"Authorization": "Bearer owner-token"}) as response:
            assert response.status == 200
            body = await response.json()
    expected = core_context(talk, "owned", T0)
    # observation pieces carry relative dates ("3 days ago"), anchored at the request time here
    assert body["system"][:2] == expected.system[:2] and len(body["system"]) == len(expected.system)
    assert [m["id"] for m in body["messages"]] == [m.id for m in expected.messages]
    assert body["chat"][-1]["content"] == expected.as_chat()[-1]["content"]
    status, text = await get(f"{base}/v1/threads/owned/status", "owner-token")  # single-resource token
    assert status == 200 and '"generation"' in text


async def test_a_thread_read_again_is_not_assembled_again(service, monkeypatch) -> None:
    base, _ = service
    assembled: list[str] = []
    assemble = Reader._assemble
    monkeypatch.setattr(Reader, "_assemble", lambda self, view, thread, now: assembled.append(thread)
                        or assemble(self, view, thread, now))
    first = await get(f"{base}/v1/threads/owned/context?resource_id=r-owner", "owner-token")
    again = await get(f"{base}/v1/threads/owned/context?resource_id=r-owner", "owner-token")
    assert first[0] == 200 and first == again and assembled == ["owned"], "the same row version: its body kept"
    other = await get(f"{base}/v1/threads/theirs/context?resource_id=r-thief", "thief-token")
    assert other[0] == 200 and other != first and assembled == ["owned", "theirs"]


async def test_the_body_is_the_response_models_json_for_the_assembled_context(service, monkeypatch) -> None:
    """streams/reader/context_json.py writes the body from kept pieces; over the stored tables (the
    sink's rows, the reader's query) it is the response model's JSON byte for byte, waited or not; the
    lean body (``chat=false``, the row's stored messages) validates to it without its chat."""
    base, _ = service
    contexts: list = []
    assemble = Reader._assemble

    def assembled(self, view, thread, now, window=None):
        context = assemble(self, view, thread, now, window)
        if window is None:  # the model's messages, not the lean body's stand-ins
            contexts.append(context)
        return context

    monkeypatch.setattr(Reader, "_assemble", assembled)
    for query in ("resource_id=r-owner", "resource_id=r-owner&wait_for_message_id=owned-m59"):
        status, text = await get(f"{base}/v1/threads/owned/context?{query}", "owner-token")
        model = ContextResponse.of("owned", "r-owner", contexts[-1]).model_dump(mode="json", exclude_none=False)
        assert status == 200 and text.encode() == orjson.dumps(model) and contexts[-1].messages
        status, text = await get(f"{base}/v1/threads/owned/context?{query}&chat=false", "owner-token")
        lean = ContextResponse.model_validate_json(text).model_dump(mode="json", exclude_none=False)
        assert status == 200 and lean == {**model, "chat": []} and text.encode() != orjson.dumps(lean)  # kept apart
    status, text = await get(f"{base}/v1/threads/owned/context?resource_id=r-owner&chat=no", "owner-token")
    assert status == 400 and "chat must be true or false" in text


async def test_refusals_leak_nothing(service) -> None:
    base, talk = service
    secret = secrets_of(talk, "owned")
    cases = [
        (f"{base}/v1/threads/owned/context?resource_id=r-owner", None, 401),
        (f"{base}/v1/threads/owned/context?resource_id=r-owner", "wrong-token", 401),
        (f"{base}/v1/threads/owned/context?resource_id=r-owner", "thief-token", 403),
        (f"{base}/v1/threads/owned/context?resource_id=r-thief", "thief-token", 404),
        (f"{base}/v1/threads/owned/status?resource_id=r-thief", "thief-token", 404),
        (f"{base}/v1/threads/owned/context", "both-token", 400),
        (f"{base}/v1/threads/owned/context?resource_id={quote(CRAFTED[0])}", "both-token", 403),
        (f"{base}/v1/threads/owned/context?resource_id=r-thief&wait_for_message_id=owned-m0&timeout=0.2",
         "thief-token", 504),
    ]
    cases += [(f"{base}/v1/threads/{quote(crafted, safe='')}/context?resource_id=r-owner", "owner-token", 404)
              for crafted in CRAFTED]
    for url, token, expected in cases:
        status, text = await get(url, token)
        assert status == expected, (url, token, status, text)
        assert not any(s in text for s in secret), (url, text)
    status, _ = await get(f"{base}/v1/threads/owned/context?resource_id=r-owner", "owner-token")
    assert status == 200, "the crafted ids changed nothing"


async def test_recall_is_bound_to_the_tokens_resources(service) -> None:
    base, talk = service
    async with aiohttp.ClientSession() as session:
        for token, body, expected in (("wrong-token", {}, 401), ("thief-token", {"resource_id": "r-owner"}, 403),
                                      ("owner-token", [], 400)):
            async with session.post(f"{base}/v1/recall", json=body,
                                    headers={"Authorization": f"Bearer {token}"}) as response:
                text = await response.text()
                assert response.status == expected, text
                assert not any(s in text for s in secrets_of(talk, "owned"))


async def test_openapi_document_describes_the_routes(service) -> None:
    base, _ = service
    status, text = await get(f"{base}/openapi.json")
    assert status == 200
    for path in ("/v1/threads/{thread_id}/context", "/v1/threads/{thread_id}/status", "/v1/recall"):
        assert path in text
    assert '"ContextResponse"' in text and '"StatusEvent"' in text
