"""Issue 23 item 2 through one real worker: ``/metrics`` on its web port and on its reader port.

The worker (embedded chDB, so the reader runs in the same process) observes synchronously at 300
tokens with the deterministic model. A few messages make one observation cycle; both pages are
then scraped and the counters must have moved — records folded, batches, a model call by role and
model, lifecycle events, consumer lag per partition, the reader's request latency by route —
while no thread, resource or message id appears anywhere on either page.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import aiohttp
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from schemas.messages import ChatMessage, TextPart
from streams.services.worker_process import wait_http
from streams.topics import Topics
from tests.integration.pipeline import EventLog, WorkerProcess, produce, wait_until

pytestmark = pytest.mark.integration

TOKEN = "metrics-test-token"
CONFIG = {"observation": {"messageTokens": 300, "bufferTokens": False}}
FILLER = ("We compared the train timetable with the ferry schedule, weighed the budget for the hotel, and agreed "
          "to book the museum tickets once the dates are settled for the whole group of travellers.")
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture(scope="module")
def worker(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    resource = f"r-metrics-{uuid.uuid4().hex[:6]}"
    process = WorkerProcess(kafka_bootstrap, f"mx{uuid.uuid4().hex[:8]}", CONFIG, tmp_path_factory.mktemp("metrics"),
                            extra_env={"OM_READER_TOKENS": orjson.dumps({TOKEN: [resource]}).decode()})
    process.resource = resource  # type: ignore[attr-defined]
    handle = process.start()
    wait_http(f"http://127.0.0.1:{handle.env['OM_READER_PORT']}/healthz", handle.proc, handle.log)
    yield process
    process.stop()


async def scrape(url: str) -> tuple[str, Samples]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:  # no token: open
        body = await response.text()
        assert response.status == 200, body
        assert response.headers["Content-Type"].startswith("text/plain; version=")
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(body) for s in family.samples}
    return body, samples


def total(samples: Samples, name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))


async def test_both_metrics_pages_move_with_a_cycle_and_name_no_id(worker: WorkerProcess,
                                                                    kafka_bootstrap: str) -> None:
    handle, resource = worker.handles[0], worker.resource  # type: ignore[attr-defined]
    web = f"http://127.0.0.1:{handle.env['OM_WEB_PORT']}/metrics"
    reader = f"http://127.0.0.1:{handle.env['OM_READER_PORT']}"
    _, before = await scrape(web)
    thread = f"t-metrics-{uuid.uuid4().hex[:6]}"
    start = int(time.time() * 1000) - 10 * 60_000
    messages = [ChatMessage(id=f"{thread}-m{i}", thread_id=thread, resource_id=resource,
                            role="user" if i % 2 == 0 else "assistant", created_at=start + i * 60_000,
                            parts=[TextPart(text=f"Message {i}. {FILLER}")]) for i in range(10)]
    topics = Topics.for_prefix(worker.prefix)
    async with EventLog(kafka_bootstrap, topics.events) as events:
        await produce(kafka_bootstrap, topics.messages, [(f"thread:{thread}", m.to_bytes()) for m in messages])
        await wait_until(lambda: events.count(f"thread:{thread}", "observation-end") >= 1, 60, "an observation-end")

    async with aiohttp.ClientSession() as session, session.get(
            f"{reader}/v1/threads/{thread}/context", headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        assert response.status == 200, await response.text()

    web_body, after = await scrape(web)
    deadline = time.monotonic() + 30
    while total(after, "om_sink_flush_seconds_count", phase="committed") <= \
            total(before, "om_sink_flush_seconds_count", phase="committed"):  # the sink's writes gather (OM_SINK_GATHER_MS)
        assert time.monotonic() < deadline, "the sink never wrote the turns' rows"
        await asyncio.sleep(0.05)  # the scrape's poll interval
        web_body, after = await scrape(web)
    reader_body, from_reader = await scrape(f"{reader}/metrics")
    assert total(after, "om_records_folded_total", input="messages") - \
        total(before, "om_records_folded_total", input="messages") >= len(messages)
    assert total(after, "om_batch_seconds_count") > total(before, "om_batch_seconds_count")
    for phase in ("announce", "written", "committed"):  # the embedded sink announces the turns' rows
        assert total(after, "om_sink_flush_seconds_count", phase=phase) > total(before, "om_sink_flush_seconds_count",
                                                                               phase=phase), phase
    model = "om-deterministic/observer"
    assert total(after, "om_llm_calls_total", role="observer", model=model, outcome="ok") >= 1
    assert total(after, "om_llm_tokens_total", role="observer", model=model, direction="input") > 0
    assert total(after, "om_lifecycle_events_total", type="observation-end") >= 1
    assert total(after, "om_jobs_total", kind="observe", outcome="ok") >= 1
    assert total(after, "om_jobs_in_flight", kind="observe") == 0
    lags = {dict(ls)["partition"] for (n, ls), _ in after.items() if n == "om_consumer_lag"}
    assert lags and lags <= {"0", "1"}, f"lag per owned partition, got {lags}"
    assert total(after, "om_state_keys") >= 1 and total(after, "om_state_decoded") >= 1
    deadline = time.monotonic() + 30
    while total(after, "om_state_snapshot_fence_seconds_count") < 1:  # the harness's workers copy every second
        assert time.monotonic() < deadline, "no snapshot of the local store was published"
        await asyncio.sleep(0.05)  # the scrape's poll interval
        web_body, after = await scrape(web)
    assert time.time() - total(after, "om_state_snapshot_timestamp_seconds") < 60
    route = "/v1/threads/{thread_id}/context"
    assert total(from_reader, "om_reader_request_seconds_count", route=route, method="GET", status="200") >= 1
    for body in (web_body, reader_body):
        for an_id in (thread, resource, messages[0].id):
            assert an_id not in body
