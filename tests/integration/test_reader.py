"""The reader against the real broker and ClickHouse engine: context() equals the core's own view."""

from __future__ import annotations

from dataclasses import replace

import pytest

from processors.config import OMConfig
from processors.context import build_context
from processors.context import OTHER_CONVERSATIONS_INTRO
from processors.machine import counter_for
from processors.context import other_conversations_block
from schemas.messages import ChatMessage
from streams.reader import NotCaughtUp, Reader, ThreadNotFound
from tests.integration.om_pipeline import (
    REFLECTIVE,
    Conversation,
    core_context,
    database_client,
    make_topics,
    publish,
    sink_until_drained,
)
from tests.unit.machine.core_driver import T0

pytestmark = pytest.mark.integration
NOW = T0 + 30 * 86_400_000


def core_resource_context(conversation: Conversation, resource: str, thread: str):
    """Resource scope: this thread's unobserved messages, the others' as the reference block."""
    state = conversation.states[f"resource:{resource}"]
    others: dict[str, list[ChatMessage]] = {}
    for message in state.window:
        others.setdefault(message.thread_id, []).append(message)
    tz = state.record.observed_timezone
    block = other_conversations_block(others, thread, counter_for(conversation.config), tz)
    return replace(build_context(state.record.active_observations, others.get(thread, []), NOW,
                                 meta=state.threads.get(thread), timezone=tz, other_conversations=block),
                   observed_through=state.record.last_observed_at)


async def test_context_equals_the_core_after_a_conversation(kafka_bootstrap, clickhouse_dsn, new_topic) -> None:
    config = OMConfig.model_validate(REFLECTIVE)
    conversation = Conversation(config)
    conversation.talk(160, thread="ta", resource="ra", gap_every=25)
    conversation.talk(7, thread="tb", resource="ra")
    state = conversation.states["thread:ta"]
    assert state.record.generation >= 2 and state.window, "the conversation must reflect and keep a window"
    assert any(d.kind == "message-inserted" for _, d in conversation.records)
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, conversation)
    client = database_client(clickhouse_dsn)
    await sink_until_drained(client, kafka_bootstrap, topics, total)

    reader = Reader(client, config)
    for thread in ("ta", "tb"):
        got = await reader.context(thread, "ra", now_ms=NOW)
        assert got == core_context(conversation, thread, NOW)
    status = await reader.status("ta", "ra")
    assert status is not None and status.generation == state.record.generation
    last = conversation.messages[-1][1]
    await reader.context("tb", "ra", wait_for_message_id=last.id, timeout=5)


async def test_resource_scope_shows_each_thread_the_other_threads_unobserved_messages(
        kafka_bootstrap, clickhouse_dsn, new_topic) -> None:
    config = OMConfig.model_validate({**REFLECTIVE, "scope": "resource"})
    conversation = Conversation(config)
    conversation.talk(60, thread="ta", resource="ra")
    # tb's last user message is a step that observes the largest threads first and leaves tb's reply
    conversation.talk(7, thread="tb", resource="ra", start=T0 + 86_400_000)
    conversation.talk(2, thread="tc", resource="ra", start=T0 + 2 * 86_400_000)
    state = conversation.states["resource:ra"]
    assert state.record.active_observations, "the user's record must hold observations"
    assert {"tb", "tc"} <= {m.thread_id for m in state.window}, "two threads with unobserved messages"
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, conversation)
    client = database_client(clickhouse_dsn)
    await sink_until_drained(client, kafka_bootstrap, topics, total, scope="resource")

    reader = Reader(client, config)
    for thread in ("ta", "tb", "tc"):
        got = await reader.context(thread, "ra", now_ms=NOW)
        assert got == core_resource_context(conversation, "ra", thread)
        assert any(s.startswith(OTHER_CONVERSATIONS_INTRO) for s in got.system), f"{thread}: the others' block"


async def test_other_resources_and_unknown_threads_are_not_found(kafka_bootstrap, clickhouse_dsn, new_topic) -> None:
    config = OMConfig.model_validate(REFLECTIVE)
    conversation = Conversation(config)
    conversation.talk(40, thread="owned", resource="r-owner")
    conversation.talk(1, thread="lonely", resource="r-owner")  # one message: no record snapshot yet
    topics = await make_topics(new_topic)
    total = await publish(kafka_bootstrap, topics, conversation)
    client = database_client(clickhouse_dsn)
    await sink_until_drained(client, kafka_bootstrap, topics, total)

    reader = Reader(client, config)
    assert (await reader.context("lonely", "r-owner", now_ms=NOW)).messages[0].id == "lonely-m0"
    for thread, resource in (("owned", "r-thief"), ("lonely", "r-thief"), ("nope", "r-owner"),
                             ("owned' OR 1=1 --", "r-owner"), ("owned", "r-owner' OR '1'='1")):
        with pytest.raises(ThreadNotFound):
            await reader.context(thread, resource, now_ms=NOW)
        with pytest.raises(ThreadNotFound):
            await reader.status(thread, resource)
    with pytest.raises(NotCaughtUp):
        await reader.context("owned", "r-thief", wait_for_message_id="owned-m0", timeout=0.3)
