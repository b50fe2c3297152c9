"""OpenTelemetry traces of a cycle (streams/tracing), read from the SDK's in-memory exporter.

A real cycle runs through the shell's code paths without a broker: the processor's fold issues a
job from a message, the LLM worker's ``run_job`` runs it against the deterministic model through
``LiteLLMClient``, and the fold applies the result. The spans must form one trace with the
documented parent links, carry the documented figures, and say nothing a tenant wrote or is
named by. Tracing off must not even import OpenTelemetry.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from processors.config import OMConfig
from processors.tokens import get_counter
from schemas.jobs import ObserveJob, decode_job
from schemas.messages import ChatMessage, TextPart
from streams import tracing
from streams.fold import BatchFolder, InputRecord
from streams.llm.client import LiteLLMClient
from streams.llm.jobs import run_job
from streams.llm.retry import RetryPolicy
from streams.topics import Topics
from streams.tracing.ids import cycle_ids
from streams.tracing.settings import TracingSettings

ROOT = Path(__file__).resolve().parents[2]
TOPICS = Topics.for_prefix("om")
NOW = 1_767_600_000_000
THREAD, RESOURCE, SECRET = "thread-zebra-42", "resource-okapi-7", "Quetzalcoatl"
KEY = f"thread:{THREAD}"
CONFIG = {"observation": {"message_tokens": 50, "buffer_tokens": False},
          "reflection": {"observation_tokens": 100_000}}


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    assert tracing.start({}, exporter=exporter)
    yield exporter
    tracing.stop()


def config(model: str = "om-deterministic/observer") -> OMConfig:
    return OMConfig.model_validate({**CONFIG, "model": model})


def message(mid: str = "m1") -> bytes:
    text = f"My name is Ada; I moved to Lisbon last week with my two cats, {SECRET} and Pixel. " * 3
    return ChatMessage(id=mid, thread_id=THREAD, resource_id=RESOURCE, role="user", created_at=NOW,
                       parts=[TextPart(text=text)]).to_bytes()


async def one_cycle(cfg: OMConfig, *, old_worker: bool = False) -> tuple[ObserveJob, bytes, BatchFolder, dict]:
    """A message folded into a job, the job run by the worker's code, the result folded."""
    folder, states = BatchFolder(cfg, TOPICS, clock=lambda: NOW / 1000), {}
    issued = folder.fold([InputRecord(TOPICS.messages, 0, 1, KEY.encode(), message(), NOW)], states)
    [job] = [decode_job(o.value) for o in issued.outgoing if o.topic == TOPICS.jobs]
    llm = LiteLLMClient(RetryPolicy(max_retries=0))
    result = await run_job(job, cfg, llm, get_counter())
    if old_worker:
        result = result.model_copy(update={"traceparent": None})
    value = result.to_bytes()
    folder.fold([InputRecord(TOPICS.results, 0, 2, KEY.encode(), value, NOW + 10)], states)
    return job, value, folder, states


def by_name(spans: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in spans.get_finished_spans():
        found.setdefault(span.name.split(" ")[0], []).append(span)
    return found


def said(span: ReadableSpan) -> list[str]:
    """Every string a span carries: name, attributes, events and their attributes."""
    values = [span.name, *(str(v) for v in span.attributes.values())]
    for event in span.events:
        values += [event.name, *(str(v) for v in event.attributes.values())]
    return values


async def test_a_cycle_is_one_trace_from_the_message_through_the_model_call_to_the_result_and_its_events(
        spans: InMemorySpanExporter) -> None:
    job, _, _, _ = await one_cycle(config())
    named = by_name(spans)
    [cycle], [run], [applied] = named["om.cycle"], named["om.job"], named["om.result"]
    calls = named["chat"]
    trace_id, root_id = cycle_ids(job.cycle_id)

    # one trace, with the cycle's derived ids at the root
    assert {s.context.trace_id for s in spans.get_finished_spans()} == {trace_id}
    assert f"{trace_id:032x}" == tracing.trace_id(job.cycle_id)
    assert cycle.parent is None and cycle.context.span_id == root_id
    assert run.parent.span_id == root_id and run.parent.is_remote
    assert calls and all(c.parent.span_id == run.context.span_id for c in calls)
    assert applied.parent.span_id == run.context.span_id and applied.parent.is_remote  # by the result's traceparent
    assert (cycle.kind, run.kind, calls[0].kind, applied.kind) == (
        SpanKind.PRODUCER, SpanKind.CONSUMER, SpanKind.CLIENT, SpanKind.CONSUMER)

    # the figures: role, model, tokens, latency, outcome
    assert {k: cycle.attributes[k] for k in ("om.cycle_id", "om.role", "om.mode", "om.trigger", "om.messages")} == {
        "om.cycle_id": job.cycle_id, "om.role": "observer", "om.mode": "sync", "om.trigger": "message",
        "om.messages": 1}
    assert cycle.attributes["om.input_tokens"] == job.tokens_to_observe > 0
    assert [e.name for e in cycle.events] == ["observation-start"]
    call = calls[0].attributes
    assert call["gen_ai.request.model"] == "om-deterministic/observer" and call["om.role"] == "observer"
    assert call["gen_ai.usage.input_tokens"] > 0 and call["gen_ai.usage.output_tokens"] > 0
    assert call["gen_ai.usage.cache_read.input_tokens"] == 0 and call["om.outcome"] == "ok"
    assert call["om.attempts"] == 1 and call["om.latency_ms"] >= 0
    assert run.attributes["om.outcome"] == "ok" and run.attributes["om.model"] == "om-deterministic/observer"
    assert run.attributes["om.input_tokens"] == sum(c.attributes["gen_ai.usage.input_tokens"] for c in calls)
    assert run.attributes["om.latency_ms"] >= 0 and run.status.status_code == StatusCode.UNSET
    assert applied.attributes["om.outcome"] == "applied"
    assert applied.attributes["om.output_tokens"] == run.attributes["om.output_tokens"]
    assert "observation-end" in [e.name for e in applied.events]
    assert all(e.attributes["om.cycle_id"] == job.cycle_id for e in applied.events if "cycle_id" in e.name)

    # never the text, never the tenant's ids
    for span in spans.get_finished_spans():
        for value in said(span):
            assert SECRET not in value and "Lisbon" not in value
            assert THREAD not in value and RESOURCE not in value, (span.name, value)


async def test_tenant_ids_are_on_the_spans_only_when_the_operator_opts_in() -> None:
    exporter = InMemorySpanExporter()
    tracing.start({"OM_TRACE_TENANT_IDS": "true"}, exporter=exporter)
    try:
        await one_cycle(config())
    finally:
        tracing.stop()
    named = by_name(exporter)
    assert named["om.cycle"][0].attributes["om.thread_id"] == THREAD
    assert named["om.job"][0].attributes["om.resource_id"] == RESOURCE
    assert named["om.result"][0].attributes["om.key"] == KEY
    assert all(SECRET not in value for span in exporter.get_finished_spans() for value in said(span))


async def test_a_result_folded_again_is_a_duplicate_and_one_from_an_older_worker_hangs_under_the_cycle(
        spans: InMemorySpanExporter) -> None:
    job, value, folder, states = await one_cycle(config(), old_worker=True)
    folder.fold([InputRecord(TOPICS.results, 0, 3, KEY.encode(), value, NOW + 20)], states)
    first, again = by_name(spans)["om.result"]
    _, root_id = cycle_ids(job.cycle_id)
    assert first.parent.span_id == root_id  # no traceparent on the result: the cycle's root
    assert (first.attributes["om.outcome"], again.attributes["om.outcome"]) == ("applied", "duplicate")


async def test_a_failed_model_call_is_an_error_told_by_its_kind_and_the_result_is_a_failed_cycle(
        spans: InMemorySpanExporter) -> None:
    await one_cycle(config("om-deterministic/observer?fail=400"))
    named = by_name(spans)
    [call], [run], [applied] = named["chat"], named["om.job"], named["om.result"]
    assert call.status.status_code == StatusCode.ERROR and call.status.description is None
    assert call.attributes["error.type"] == "ModelCallError" and call.attributes["om.transient"] is False
    assert run.attributes["om.outcome"] == "failed" and run.status.status_code == StatusCode.ERROR
    assert applied.attributes["om.outcome"] == "failed"
    assert "observation-failed" in [e.name for e in applied.events]
    assert all(not span.events or all(e.name != "exception" for e in span.events) for span in (call, run))


async def test_a_ratio_sampler_keeps_or_drops_a_cycle_in_every_process_alike(monkeypatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "traceidratio")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0.5")
    exporter = InMemorySpanExporter()
    tracing.start({}, exporter=exporter)
    try:
        header = {"key": KEY, "thread_id": THREAD, "resource_id": RESOURCE, "record_id": "rec", "generation": 0,
                  "issued_at": NOW, "mode": "buffer", "messages": [], "tokens_to_observe": 0}
        jobs = [ObserveJob(cycle_id=f"buffer-obs-{NOW}-{n:09d}", **header) for n in range(40)]
        for job in jobs:
            tracing.decided(SimpleNamespace(), None, SimpleNamespace(jobs=[job], events=()))  # the processor
            await run_job(job, config(), LiteLLMClient(), get_counter())  # the worker: no messages, no call
    finally:
        tracing.stop()
    named = by_name(exporter)
    roots = {s.context.trace_id for s in named.get("om.cycle", [])}
    runs = {s.context.trace_id for s in named.get("om.job", [])}
    assert roots == runs and 0 < len(roots) < len(jobs)


def test_tracing_is_off_unless_the_environment_asks_and_the_exporter_follows_it() -> None:
    def exporters(**env: str) -> list[str]:
        return TracingSettings.from_env(env).exporters()

    assert exporters() == [] and tracing.start({}) is False
    assert exporters(OTEL_TRACES_EXPORTER="none") == []
    assert exporters(OTEL_TRACES_EXPORTER="console") == ["console"]
    assert exporters(OTEL_TRACES_EXPORTER="otlp, console") == ["otlp", "console"]
    assert exporters(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318") == ["otlp"]
    assert exporters(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:4318/v1/traces") == ["otlp"]
    assert exporters(OTEL_SDK_DISABLED="true", OTEL_TRACES_EXPORTER="console") == []
    with pytest.raises(tracing.TracingConfigError, match="OTEL_TRACES_EXPORTER: unknown exporter"):
        tracing.start({"OTEL_TRACES_EXPORTER": "zipkin"})
    with pytest.raises(tracing.TracingConfigError, match="opentelemetry-exporter-otlp-proto-grpc"):
        tracing.start({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})


def test_the_env_chosen_exporters_start_and_the_service_is_named() -> None:
    try:
        assert tracing.start({"OTEL_TRACES_EXPORTER": "otlp,console",
                              "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, role="llm")
        provider = tracing._active.provider
        processors = provider._active_span_processor._span_processors
        assert sorted(type(p.span_exporter).__name__ for p in processors) == [
            "ConsoleSpanExporter", "OTLPSpanExporter"]
        assert provider.resource.attributes["service.name"] == "om-stream"
        assert provider.resource.attributes["om.worker.role"] == "llm"
    finally:
        tracing.stop()  # no span was made: nothing is sent to port 9


def test_off_the_shell_does_not_import_opentelemetry() -> None:
    script = ("import sys\n"
              "import streams.fold, streams.llm.jobs, streams.llm.client, streams.app, streams.worker\n"
              "from streams import tracing\n"
              "assert tracing.start({}) is False\n"
              "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
