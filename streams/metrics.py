"""The pipeline's Prometheus metrics (issue 23 item 2): one process registry, scraped at ``/metrics``.

The worker's Faust web port and the reader's HTTP port both serve :func:`exposition` (an embedded
worker runs both in one process, so both pages show the same registry). Every name starts ``om_``;
the Grafana sample in ``deploy/grafana-dashboard.json`` uses them.

Rules this module keeps:

* Labels come from closed sets only: a topic's kind, a partition number, a role, a configured
  model name, a lifecycle event type, a dead letter's stage and field class, a route template, an
  HTTP status, a reader refusal's or connection cut's reason. Never a thread, resource, message or
  cycle id, a bearer token, a client address, a key, or any text of a message or
  an error — :data:`LABEL_NAMES` lists every label name in use and a unit test holds them to it.
* A value from outside (a topic name, an event type, a dead letter's field path) is mapped onto
  its closed set here; anything unknown becomes ``other``, so a hostile input cannot grow a series.
* Recording never raises into the pipeline and costs a dict lookup; consumer lag is read at
  scrape time from what the Faust consumer already knows (no broker round trip).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from schemas.tagged import members_by_tag
from schemas.control import ControlEvent
from schemas.jobs import Job, JobResult
from schemas.messages import ChatMessage

log = logging.getLogger(__name__)

TOPIC_KINDS = frozenset({"messages", "control", "jobs", "results", "events", "records", "dlq"})
EVENT_TYPES = frozenset({"status", "observation-start", "observation-end", "observation-failed",
                         "buffering-start", "buffering-end", "buffering-failed", "activation", "thread-update",
                         "observation-latched", "budget-exceeded", "budget-restored"})
DEAD_LETTER_STAGES = frozenset({"decode", "validate", "apply"})
FAILURE_KINDS = frozenset({"observation-failed", "buffering-failed", "reflection-failed",
                           "reflection-buffering-failed", "llm-call", "degenerate-output", "idle-tick-send",
                           "result-without-state"})
REFUSAL_REASONS = frozenset({"busy", "token-busy", "token-rate"})
CUT_REASONS = frozenset({"cap", "slow-head", "idle", "slow-body"})
LABEL_NAMES = frozenset({"input", "topic", "partition", "kind", "role", "model", "outcome", "direction",
                         "type", "stage", "field", "route", "method", "status", "reason", "phase"})
OTHER = "other"


def _input_fields() -> frozenset[str]:
    """A dead letter's field class is the first segment of its field path when that is a top-level
    field (name or wire alias) of an input schema; a path may quote a client's own JSON keys, so
    anything else is ``other``."""
    models = [ChatMessage, *(m for union in (ControlEvent, Job, JobResult) for m in members_by_tag(union).values())]
    names = {"none", "key"}
    for model in models:
        for name, info in model.model_fields.items():
            names.update(n for n in (name, info.alias, info.serialization_alias) if n)
    return frozenset(names)


DEAD_LETTER_FIELDS = _input_fields()

SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
LLM_SECONDS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

RECORDS_FOLDED = Counter("om_records_folded", "Input records the processor folded, by input topic kind "
                         "(messages, control, results); a dead-lettered record counts too", ["input"])
BATCH_SECONDS = Histogram("om_batch_seconds", "Processor batch latency: fold, send and broker confirmation",
                          buckets=SECONDS)
BATCH_RECORDS = Histogram("om_batch_records", "Input records per processor batch",
                          buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000))
SINK_FLUSH_SECONDS = Histogram("om_sink_flush_seconds", "Sink flush time from its start to each phase: announce "
                               "(the embedded reader handed the rows its waits return, before any insert), "
                               "written (every row inserted), committed (offsets committed)", ["phase"],
                               buckets=SECONDS)
LIFECYCLE_EVENTS = Counter("om_lifecycle_events", "Lifecycle events the processor emitted, by type", ["type"])
JOBS_IN_FLIGHT = Gauge("om_jobs_in_flight", "Observer/Reflector jobs the LLM worker is running now", ["kind"])
JOBS_DONE = Counter("om_jobs", "Jobs the LLM worker finished, by kind and outcome", ["kind", "outcome"])
LLM_CALLS = Counter("om_llm_calls", "Model requests (each after its retries), by role, model and outcome",
                    ["role", "model", "outcome"])
LLM_SECONDS_HIST = Histogram("om_llm_call_seconds", "Model request latency including retries, by role and model",
                             ["role", "model"], buckets=LLM_SECONDS)
LLM_TOKENS = Counter("om_llm_tokens", "Model tokens by role, model and direction (input, output)",
                     ["role", "model", "direction"])
FAILURES = Counter("om_failures", "Failures by kind (failed cycles, failed model calls, degenerate output, "
                   "idle ticks not sent, results for a key without state)", ["kind"])
DEAD_LETTERS = Counter("om_dead_letters", "Dead letters by stage and field class", ["stage", "field"])
READER_SECONDS = Histogram("om_reader_request_seconds", "Reader HTTP request latency by route template",
                           ["route", "method", "status"], buckets=SECONDS)
READER_REFUSED = Counter("om_reader_refused", "Reader calls answered 429 by admission control, by route template "
                         "and reason (busy: the route's budget is used up; token-busy: the token's share of it; "
                         "token-rate: the token's recall rate)", ["route", "reason"])
READER_CONNECTIONS_CUT = Counter("om_reader_connections_cut", "Reader connections closed by the reader, by reason "
                                 "(cap: refused over the connection cap; slow-head, idle, slow-body: timeouts)",
                                 ["reason"])
STATE_SNAPSHOT_TIME = Gauge("om_state_snapshot_timestamp_seconds", "When the last snapshot of the worker's local "
                            "store was published (a start after a crash reads the changelog after it; alert "
                            "when it is much older than OM_STATE_SNAPSHOT_S)")
STATE_SNAPSHOT_FENCE = Histogram("om_state_snapshot_fence_seconds", "How long a snapshot held the processor's "
                                 "fence (no batch folds meanwhile)", buckets=SECONDS)
READER_CONNECTIONS_OPEN = Gauge("om_reader_connections_open", "Connections open on the reader's listener")


def exposition() -> tuple[bytes, str]:
    """The registry in Prometheus' text format, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def topic_kind(topic: str) -> str:
    """``<prefix>.<kind>.v1`` → ``kind`` (a prefix may contain dots; the kind is the next-to-last part)."""
    parts = topic.rsplit(".", 2)
    return parts[-2] if len(parts) == 3 and parts[-2] in TOPIC_KINDS else OTHER


def _closed(value: str | None, allowed: frozenset[str]) -> str:
    return value if value in allowed else OTHER


def folded(records: Iterable[Any], seconds: float) -> None:
    """One processor batch: its records (``.topic``), and how long it took. Counted by topic first:
    a counter's ``labels`` per record cost ~3 µs of each message."""
    by_topic: dict[str, int] = {}
    for record in records:
        by_topic[record.topic] = by_topic.get(record.topic, 0) + 1
    for topic, n in by_topic.items():
        RECORDS_FOLDED.labels(topic_kind(topic)).inc(n)
    BATCH_SECONDS.observe(seconds)
    BATCH_RECORDS.observe(sum(by_topic.values()))


def events_emitted(counts: dict[tuple[str, str | None], int]) -> None:
    """Lifecycle events by ``(type, operation_type)``; the failed ones count as failures too."""
    for (event_type, operation), n in counts.items():
        LIFECYCLE_EVENTS.labels(_closed(event_type, EVENT_TYPES)).inc(n)
        if event_type in ("observation-failed", "buffering-failed"):
            kind = event_type if operation != "reflection" else (
                "reflection-failed" if event_type == "observation-failed" else "reflection-buffering-failed")
            FAILURES.labels(kind).inc(n)


def dead_letter(stage: str, field: str | None) -> None:
    head = (field or "none").replace("[", ".").split(".", 1)[0]
    DEAD_LETTERS.labels(_closed(stage, DEAD_LETTER_STAGES), _closed(head, DEAD_LETTER_FIELDS)).inc()


def reader_refused(route: str, reason: str) -> None:
    """``route`` is a route template (never a path, which holds a thread id)."""
    READER_REFUSED.labels(route, _closed(reason, REFUSAL_REASONS)).inc()


def reader_connection_cut(reason: str) -> None:
    READER_CONNECTIONS_CUT.labels(_closed(reason, CUT_REASONS)).inc()


def failure(kind: str, count: int = 1) -> None:
    FAILURES.labels(_closed(kind, FAILURE_KINDS)).inc(count)


def job_kind(kind: str) -> str:
    return kind if kind in ("observe", "reflect") else OTHER


def llm_call(role: str, model: str, seconds: float, *, ok: bool, input_tokens: int = 0,
             output_tokens: int = 0) -> None:
    """One model request; ``model`` is the configured (litellm) model name, a bounded set."""
    LLM_CALLS.labels(role, model, "ok" if ok else "failed").inc()
    LLM_SECONDS_HIST.labels(role, model).observe(seconds)
    if input_tokens:
        LLM_TOKENS.labels(role, model, "input").inc(input_tokens)
    if output_tokens:
        LLM_TOKENS.labels(role, model, "output").inc(output_tokens)
    if not ok:
        failure("llm-call")


class ConsumerLag(Collector):
    """``om_consumer_lag{topic, partition}``: records behind the (last stable) high watermark on the
    partitions this worker's Faust consumer owns, from the offsets it already tracks: the high
    watermark of its last fetch minus the next offset its streams will read. A partition not read
    yet reports nothing (its position is unknown without asking the broker)."""

    def __init__(self) -> None:
        self.app: Any = None

    def watch(self, app: Any) -> None:
        self.app = app

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("om_consumer_lag", "Records behind the high watermark, per owned input "
                                   "partition (from the consumer's last fetch)", labels=["topic", "partition"])
        for kind, partition, lag in self._lags():
            family.add_metric([kind, str(partition)], lag)
        yield family

    def _lags(self) -> list[tuple[str, int, int]]:
        consumer = getattr(self.app, "_consumer", None)  # never create one from a scrape
        if consumer is None:
            return []
        try:
            read = consumer._read_offset
            lags = []
            for tp in sorted(consumer.assignment()):
                kind = topic_kind(tp.topic)
                last = read.get(tp)
                if kind == OTHER or last is None:
                    continue
                highwater = consumer.highwater(tp)
                if highwater is not None:
                    lags.append((kind, tp.partition, max(0, int(highwater) - int(last) - 1)))
            return lags
        except Exception as error:  # noqa: BLE001 - a scrape must not fail on a consumer mid-rebalance
            log.debug("om.metrics.lag_unavailable", extra={"error": type(error).__name__})
            return []


CONSUMER_LAG = ConsumerLag()
REGISTRY.register(CONSUMER_LAG)


class StateMetrics(Collector):
    """The processor's key states (streams/state_store.py, streams/idle_schedule.py), read at scrape
    time: ``om_state_keys`` held, ``om_state_decoded`` cache units in memory (of ``OM_STATE_CACHE``),
    ``om_state_reads`` states read back from the local store (cache misses, since the process
    started) and ``om_idle_scheduled_keys`` keys with an idle check to come."""

    def __init__(self) -> None:
        self.table: Any = None

    def watch(self, table: Any) -> None:
        """``table``: the processor's ``StateTable`` (nothing is reported before its store opens)."""
        self.table = table

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        local = None if self.table is None else self.table.opened
        families = (
            GaugeMetricFamily("om_state_keys", "Key states the processor holds"),
            GaugeMetricFamily("om_state_decoded", "Cache units of key states decoded in memory (a key counts 1 + "
                              "its unobserved messages; bounded by OM_STATE_CACHE)"),
            CounterMetricFamily("om_state_reads", "Key states read back from the worker's local store (not in "
                                "memory when a record for them came)"),
            GaugeMetricFamily("om_idle_scheduled_keys", "Keys with an idle check to come"),
        )
        if local is not None:  # else no samples: no store yet (a scrape never makes one)
            states = local.states
            for family, value in zip(families, (len(states), states.used, states.reads, len(local.schedule)),
                                     strict=True):
                family.add_metric([], value)
        yield from families


STATE = StateMetrics()
REGISTRY.register(STATE)
