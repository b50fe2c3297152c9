"""The demo's pipeline, run by the core alone (the same decisions the worker makes), on the bundled
conversation with the demo's configuration and the offline model: the whole context the agent gets
(fixed instructions included) must be at least 3× smaller than the conversation, and every fact the
demo lists must still be in it.

Jobs run through the workers' job runner; the model call goes straight to the offline model's
answer function (what its litellm provider returns), so no event loop outlives the test."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncio

import pytest

from processors.context import build_context
from processors.machine import counter_for
from processors.machine import idle_tick_reason
from processors.model_port import ModelCall, ModelReply
from processors.simulate import Simulation
from schemas.control import IdleTick
from streams.demo import DEMO_CONFIG, THREAD, load_sample
from streams.demo_report import context_text, facts, measure
from streams.llm.deterministic.faults import parse_model
from streams.llm.deterministic.provider import answer
from streams.llm.jobs import run_job
from streams.om_config import load_config
from streams.settings import Settings



class OfflineModel:
    async def complete(self, call: ModelCall) -> ModelReply:
        model = call.model.removeprefix("om-deterministic/")
        return ModelReply(text=answer(parse_model(model).role, call.messages))


def demo_context(today: datetime, latency_ms: int = 0) -> tuple[list, list[dict]]:
    """Replay the sample, then tick the idle key the way the worker's timer does (at 9:00 today),
    and build the context the reader would serve. ``latency_ms`` is the model's latency in the
    conversation's time: 0 answers each job before the next message; a week answers none before the
    whole conversation is in, as in the demo, which replays it in a fraction of a second."""
    config = load_config(Settings(model="om-deterministic/observer"), DEMO_CONFIG)
    messages = load_sample(today)
    now = int(today.replace(hour=9).timestamp() * 1000)
    model, counter = OfflineModel(), counter_for(config)
    simulation = Simulation(config, lambda job: asyncio.run(run_job(job, config, model, counter)), latency_ms)
    for message in messages:
        simulation.feed(message)
    simulation.finish()
    (key,) = simulation.states
    for _ in range(20):  # each tick activates what is buffered; a bound, not a sleep
        if idle_tick_reason(simulation.states[key], config, now) is None:
            break
        simulation.feed(IdleTick(key=key, at=now))
        simulation.finish()
    state = simulation.states[key]
    assert not state.record.buffered_chunks
    assert counter.count_messages(list(state.window)) < config.resolved.message_tokens_min  # a short tail
    assert state.record.generation >= 1  # a reflection happened
    context = build_context(state.record.active_observations, list(state.window), now,
                            meta=state.threads.get(THREAD))
    return messages, context.as_chat()


@pytest.mark.parametrize(("today", "latency_ms"), [(datetime(2026, 5, 4, 7, tzinfo=UTC), 0),
                                                   (datetime(2027, 1, 15, 7, tzinfo=UTC), 0),
                                                   (datetime(2026, 5, 4, 7, tzinfo=UTC), 7 * 86_400_000)])
def test_demo_context_is_three_times_smaller_and_keeps_the_facts(today: datetime, latency_ms: int) -> None:
    messages, chat = demo_context(today, latency_ms)
    figures = measure(messages, chat)
    assert figures.raw > 5000 and figures.fixed > 250
    assert figures.ratio >= 3.0, (figures, chat)  # the whole context, fixed instructions included
    assert figures.memory_ratio > figures.ratio
    text = context_text(chat)
    last_day = datetime.fromtimestamp(messages[-1].created_at / 1000, UTC).date()
    missing = [fact.label for fact in facts(last_day) if not fact.known(text)]
    assert missing == [], text


def test_the_facts_are_not_in_a_context_that_forgot_them() -> None:
    """The fact patterns are not vacuous: the first day alone says none of the later facts."""
    messages = load_sample(datetime(2026, 5, 4, tzinfo=UTC))
    first_day = "\n".join(p.text for m in messages if m.created_at < messages[0].created_at + 86_400_000
                          for p in m.parts)
    assert "Memmo" in first_day and "May 12" in first_day
    last_day = datetime.fromtimestamp(messages[-1].created_at / 1000, UTC).date()
    known = [fact.label for fact in facts(last_day) if fact.known(first_day)]
    assert known == ["trip dates May 12 to May 17"]
