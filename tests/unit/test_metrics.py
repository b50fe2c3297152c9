"""Issue 23 item 2: the Prometheus metrics record what happened, under bounded, id-free labels.

Each test reads a counter before and after (the registry is the process's), so the order of
tests does not matter. The last test scrapes the whole registry after the others ran with ids in
their inputs, and finds none of them there.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import litellm
import pytest
from faust.types import TP
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import REGISTRY

from processors.config import OMConfig
from processors.model_port import ModelCall, ModelCallError
from schemas.messages import ChatMessage, TextPart
from streams import metrics
from streams.fold import BatchFolder, InputRecord
from streams.llm.client import LiteLLMClient
from streams.llm.retry import RetryPolicy
from streams.reader.http import create_app
from streams.idle_schedule import IdleSchedule
from streams.state_changelog import LocalChangelog, drop_parts, read_state
from streams.state_store import SpilledStates, open_parts
from streams.topics import Topics

TOPICS = Topics.for_prefix("metrics-test")
IDS = ("thread-sekrit-41", "resource-sekrit-42", "message-sekrit-43")  # must never reach a label
NOW = int(time.time() * 1000)


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _message(mid: str, thread: str = IDS[0]) -> bytes:
    return ChatMessage(id=mid, thread_id=thread, resource_id=IDS[1], role="user", created_at=NOW,
                       parts=[TextPart(text="the user's words " * 40)]).to_bytes()


def test_a_folded_batch_counts_its_records_latency_events_and_dead_letters() -> None:
    config = OMConfig.model_validate({"observation": {"messageTokens": 30, "bufferTokens": False}})
    key = f"thread:{IDS[0]}".encode()
    records = [InputRecord(TOPICS.messages, 0, i, key, _message(f"{IDS[2]}-{i}"), NOW) for i in range(3)]
    records.append(InputRecord(TOPICS.messages, 0, 3, key, b"{not json", NOW))
    records.append(InputRecord(TOPICS.messages, 0, 4, b"thread:elsewhere", _message("m-x"), NOW))
    result = BatchFolder(config, TOPICS).fold(records, {})
    assert result.dead_letter_reasons == [("decode", None), ("validate", "key")]
    assert result.event_counts[("observation-start", "observation")] >= 1

    before = (value("om_records_folded_total", input="messages"), value("om_batch_seconds_count"),
              value("om_lifecycle_events_total", type="observation-start"),
              value("om_dead_letters_total", stage="decode", field="none"),
              value("om_dead_letters_total", stage="validate", field="key"))
    metrics.folded(records, 0.2)
    metrics.events_emitted(result.event_counts)
    for stage, field in result.dead_letter_reasons:
        metrics.dead_letter(stage, field)
    after = (value("om_records_folded_total", input="messages"), value("om_batch_seconds_count"),
             value("om_lifecycle_events_total", type="observation-start"),
             value("om_dead_letters_total", stage="decode", field="none"),
             value("om_dead_letters_total", stage="validate", field="key"))
    assert [a - b for a, b in zip(after, before)] == [5, 1, result.event_counts[("observation-start", "observation")],
                                                      1, 1]


def test_failed_cycles_count_by_kind_and_operation() -> None:
    before = [value("om_failures_total", kind=k) for k in ("buffering-failed", "reflection-failed")]
    metrics.events_emitted({("buffering-failed", "observation"): 2, ("observation-failed", "reflection"): 1,
                            ("observation-end", "observation"): 4})
    after = [value("om_failures_total", kind=k) for k in ("buffering-failed", "reflection-failed")]
    assert [a - b for a, b in zip(after, before)] == [2, 1]


@pytest.mark.parametrize("stage, field, expected", [
    ("validate", "created_at", "created_at"), ("validate", "parts.0.text", "parts"),
    ("validate", f"metadata.{IDS[0]}", "metadata"), ("validate", IDS[1], "other"),
    ("decode", None, "none"), (IDS[2], "key", "key")])
def test_a_dead_letter_is_classed_by_a_closed_set_never_by_its_text(stage: str, field: str | None,
                                                                     expected: str) -> None:
    stage_label = stage if stage in metrics.DEAD_LETTER_STAGES else "other"
    before = value("om_dead_letters_total", stage=stage_label, field=expected)
    metrics.dead_letter(stage, field)
    assert value("om_dead_letters_total", stage=stage_label, field=expected) == before + 1


async def test_model_calls_count_by_role_and_model_with_tokens_and_failures() -> None:
    model = "openai/gpt-4o-mini"
    labels = {"role": "reflector", "model": model}
    before = (value("om_llm_calls_total", outcome="ok", **labels), value("om_llm_call_seconds_count", **labels),
              value("om_llm_tokens_total", direction="output", **labels))
    client = LiteLLMClient(extra={"mock_response": "<observations>\n* fine\n</observations>"})
    reply = await client.complete(ModelCall(role="reflector", model=model,
                                            messages=[{"role": "user", "content": IDS[2]}]))
    after = (value("om_llm_calls_total", outcome="ok", **labels), value("om_llm_call_seconds_count", **labels),
             value("om_llm_tokens_total", direction="output", **labels))
    assert [a - b for a, b in zip(after, before)] == [1, 1, reply.usage.output_tokens] and reply.usage.output_tokens

    failed_before = (value("om_llm_calls_total", outcome="failed", **labels), value("om_failures_total", kind="llm-call"))

    async def no_sleep(_: float) -> None:
        return None

    failing = LiteLLMClient(RetryPolicy(max_retries=1, jitter=0), sleep=no_sleep,
                            extra={"mock_response": litellm.RateLimitError("slow", "openai", "gpt-4o-mini")})
    with pytest.raises(ModelCallError):
        await failing.complete(ModelCall(role="reflector", model=model, messages=[{"role": "user", "content": "x"}]))
    failed_after = (value("om_llm_calls_total", outcome="failed", **labels), value("om_failures_total", kind="llm-call"))
    assert [a - b for a, b in zip(failed_after, failed_before)] == [1, 1], "one failed call after its retries"


def test_jobs_in_flight_rise_while_a_job_runs_and_fall_after() -> None:
    gauge = metrics.JOBS_IN_FLIGHT.labels("observe")
    start = value("om_jobs_in_flight", kind="observe")
    with gauge.track_inprogress():
        assert value("om_jobs_in_flight", kind="observe") == start + 1
    assert value("om_jobs_in_flight", kind="observe") == start


class _Reader:
    def recall(self, resource_id: str, request: dict) -> dict:
        return {"resource": resource_id}

    async def tables_landed(self) -> None:  # no sink: the tables are as they are
        return None


async def test_the_reader_times_requests_by_route_template_and_serves_metrics_without_a_token() -> None:
    client = TestClient(TestServer(create_app(_Reader(), {"tok": [IDS[1]]})))  # type: ignore[arg-type]
    await client.start_server()
    try:
        route = "/v1/threads/{thread_id}/status"
        before = value("om_reader_request_seconds_count", route=route, method="GET", status="401")
        assert (await client.get(f"/v1/threads/{IDS[0]}/status")).status == 401
        ok_before = value("om_reader_request_seconds_count", route="/v1/recall", method="POST", status="200")
        assert (await client.post("/v1/recall", json={}, headers={"Authorization": "Bearer tok"})).status == 200
        missing_before = value("om_reader_request_seconds_count", route="unmatched", method="GET", status="401")
        assert (await client.get(f"/{IDS[2]}")).status == 401, "no route: refused before routing tells anything"
        scraped = await client.get("/metrics")
        assert scraped.status == 200 and scraped.headers["Content-Type"].startswith("text/plain")
        body = await scraped.text()
    finally:
        await client.close()
    assert value("om_reader_request_seconds_count", route=route, method="GET", status="401") == before + 1
    assert value("om_reader_request_seconds_count", route="/v1/recall", method="POST", status="200") == ok_before + 1
    assert value("om_reader_request_seconds_count", route="unmatched", method="GET", status="401") == missing_before + 1
    assert 'om_reader_request_seconds_count{method="GET",route="/v1/threads/{thread_id}/status",status="401"}' in body


def test_consumer_lag_is_the_high_watermark_minus_the_next_offset_to_read() -> None:
    tp, unread = TP(TOPICS.messages, 1), TP(TOPICS.control, 1)
    changelog = TP("metrics-test-worker-om-state-changelog", 1)
    consumer = SimpleNamespace(_read_offset={tp: 9, changelog: 3}, assignment=lambda: [tp, unread, changelog],
                               highwater=lambda part: {tp: 25, unread: 4, changelog: 8}[part])
    lag = metrics.ConsumerLag()
    assert lag._lags() == [], "no consumer yet: nothing, and none is created"
    lag.watch(SimpleNamespace(_consumer=consumer))
    (family,) = lag.collect()
    assert [(s.labels, s.value) for s in family.samples] == [({"topic": "messages", "partition": "1"}, 15)]


def test_the_state_store_reports_its_keys_cache_misses_and_idle_checks(tmp_path: Path) -> None:
    state = metrics.StateMetrics()
    table = SimpleNamespace(opened=None)
    state.watch(table)
    assert [f.samples for f in state.collect()] == [[]] * 4, "no store yet: no samples, and none is made"
    states = SpilledStates(open_parts(tmp_path), read_state, drop_parts, capacity=1)
    schedule = IdleSchedule(OMConfig())
    table.opened = LocalChangelog(states, schedule, {})
    folded = BatchFolder(OMConfig(), TOPICS).fold([InputRecord(TOPICS.messages, 0, 0, b"thread:t", ChatMessage(
        id="m", thread_id="t", resource_id="t", role="user", created_at=int(time.time() * 1000),
        parts=[TextPart(text="hello")]).to_bytes(), int(time.time() * 1000))], states)
    for key in folded.changed:
        table.opened.writes(key, None, states[key])
    states.trim()
    states.get("thread:t")
    assert {f.name: f.samples[0].value for f in state.collect()} == {
        "om_state_keys": 1, "om_state_decoded": 2, "om_state_reads": 1, "om_idle_scheduled_keys": 0}


def test_every_label_set_is_bounded_and_holds_no_id_from_a_run() -> None:
    """Runs after the tests above put ids into threads, resources, messages, fields and paths."""
    families = [f for f in REGISTRY.collect() if f.name.startswith("om_")]
    assert {f.name for f in families} >= {"om_records_folded", "om_batch_seconds", "om_consumer_lag",
                                          "om_jobs_in_flight", "om_llm_calls", "om_llm_call_seconds",
                                          "om_llm_tokens", "om_failures", "om_dead_letters",
                                          "om_reader_request_seconds", "om_lifecycle_events", "om_reader_refused",
                                          "om_reader_connections_cut", "om_reader_connections_open"}
    for family in families:
        for sample in family.samples:
            assert set(sample.labels) <= metrics.LABEL_NAMES | {"le"}, (family.name, sample.labels)
    bounded = {"input": metrics.TOPIC_KINDS, "topic": metrics.TOPIC_KINDS, "type": metrics.EVENT_TYPES,
               "kind": metrics.FAILURE_KINDS | {"observe", "reflect"}, "stage": metrics.DEAD_LETTER_STAGES,
               "field": metrics.DEAD_LETTER_FIELDS, "outcome": {"ok", "failed"}, "direction": {"input", "output"},
               "reason": metrics.REFUSAL_REASONS | metrics.CUT_REASONS}
    for family in families:
        for sample in family.samples:
            for name, allowed in bounded.items():
                if name in sample.labels:
                    assert sample.labels[name] in allowed | {metrics.OTHER}, (family.name, sample.labels)
    body, _ = metrics.exposition()
    for an_id in IDS:
        assert an_id.encode() not in body


def test_the_sample_dashboard_queries_only_metrics_that_exist() -> None:
    dashboard = json.loads((Path(__file__).parents[2] / "deploy" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    used = {re.sub(r"_(total|bucket|count|sum)$", "", name) for e in exprs for name in re.findall(r"\bom_[a-z_]+", e)}
    defined = {f.name for f in REGISTRY.collect() if f.name.startswith("om_")}
    assert used and used <= defined, used - defined
    assert {"om_consumer_lag", "om_llm_tokens", "om_dead_letters", "om_reader_request_seconds"} <= used
