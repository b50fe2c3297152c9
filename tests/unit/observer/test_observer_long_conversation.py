"""A 200-message, multi-day conversation through Observer batches and the Reflector,
with the deterministic model behind the real litellm client."""

import re
from datetime import datetime, timezone

from processors.observer.runner import run_observer
from processors.observer.types import ObserverRequest, ObserverSettings, PriorMetadata
from processors.reflector.runner import run_reflector
from processors.reflector.types import ReflectorRequest, ReflectorSettings
from processors.tokens import get_counter
from schemas.messages import ChatMessage
from streams.llm.client import LiteLLMClient

COUNTER = get_counter()
START = int(datetime(2025, 3, 1, 8, 0, tzinfo=timezone.utc).timestamp() * 1000)
CITIES = ["Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao", "Girona", "Cadiz"]


def _conversation() -> list[ChatMessage]:
    messages = []
    for i in range(200):
        at = START + (i // 40) * 86_400_000 + (i % 40) * 7 * 60_000  # five days, 40 messages a day
        if i % 2 == 0:
            text = f"Day plan {i}: I want to visit {CITIES[i % 8]} tomorrow and spend {i * 10} euros on food."
            messages.append(ChatMessage(id=f"m{i}", thread_id="trip", role="user", created_at=at,
                                        parts=[{"type": "text", "text": text}]))
        else:
            messages.append(ChatMessage(id=f"m{i}", thread_id="trip", role="assistant", created_at=at, parts=[
                {"type": "tool-invocation", "tool_call_id": f"c{i}", "tool_name": "train_search", "state": "result",
                 "args": {"to": CITIES[(i - 1) % 8]}, "result": {"trains": [f"IC{i}"]}},
                {"type": "text", "text": f"Train IC{i} to {CITIES[(i - 1) % 8]} leaves at 9:{i % 60:02d}."}]))
    return messages


async def test_dates_times_and_priorities_survive_observation_and_reflection():
    client = LiteLLMClient()
    messages = _conversation()
    log, prior, reflections = "", PriorMetadata(), 0
    for start in range(0, 200, 20):
        outcome = await run_observer(ObserverRequest(
            messages=messages[start:start + 20], prior_observations=log, prior=prior,
            settings=ObserverSettings(model="om-deterministic/echo", previous_observer_tokens=1500),
            tz="Europe/Lisbon"), client, COUNTER)
        assert outcome.error is None and outcome.warnings == [], outcome.warnings
        log = f"{log}\n\n{outcome.observations}".strip()
        prior = PriorMetadata(current_task=outcome.current_task, suggested_response=outcome.suggested_response)
        if COUNTER.count_observations(log) > 4000:
            reflected = await run_reflector(ReflectorRequest(
                observations=log, settings=ReflectorSettings(model="om-deterministic/reflector", observation_tokens=2500)),
                client, COUNTER)
            assert reflected.error is None and reflected.token_count < COUNTER.count_observations(log)
            log, reflections = reflected.observations, reflections + 1

    assert reflections >= 2
    headers = re.findall(r"^Date: (\w{3} \d{1,2}, \d{4})$", log, re.M)
    assert headers[-1] == "Mar 5, 2025" and len(set(headers)) >= 3
    assert re.search(r"^\* 🔴 \(\d{2}:\d{2}\) User stated", log, re.M)
    assert re.search(r"^\* 🟡 \(\d{2}:\d{2}\) ", log, re.M)
    # the last user message (Mar 5, 12:26 UTC = 12:26 Lisbon) is kept verbatim with its resolved date
    # the newest note keeps its place, amount and resolved date through every reflection level (a high
    # level may merge a day's notes into one line, so its own time is not asserted)
    assert 'Day plan 198: I want to visit Girona tomorrow and spend 1980 euros on food." (meaning Mar 6, 2025)' in log
    assert prior.current_task == "Primary: Day plan 198: I want to visit Girona tomorrow and spend 1980 euros on food."


async def test_deterministic_model_is_deterministic():
    client = LiteLLMClient()
    request = ObserverRequest(messages=_conversation()[:30], settings=ObserverSettings(model="om-deterministic/observer"))
    first, second = await run_observer(request, client, COUNTER), await run_observer(request, client, COUNTER)
    assert first.observations == second.observations and first.observations
