"""The OpenTelemetry SDK set up for this process: resource, sampler, exporters, cycle ids.

Imported only when tracing starts. The provider is this package's own, not the global one: an
application embedding the SDK client keeps its own tracing, and libraries that trace through the
global provider (litellm's callbacks, when configured) are not doubled into OM's traces.

* Spans are batched (``BatchSpanProcessor``, tuned by ``OTEL_BSP_*``) so exporting never blocks
  the event loop; an explicitly given exporter (tests) gets a simple, synchronous processor.
* The sampler is the SDK's from ``OTEL_TRACES_SAMPLER`` (default ``parentbased_always_on``). As a
  cycle's trace id is the same in every process, a ratio sampler samples a cycle everywhere or
  nowhere.
"""

from __future__ import annotations

from contextvars import ContextVar

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from streams.tracing.settings import TracingSettings

DEFAULT_SERVICE_NAME = "om-stream"
PINNED: ContextVar[tuple[int, int] | None] = ContextVar("om_pinned_span_ids", default=None)


class CycleIdGenerator(RandomIdGenerator):
    """Random ids, except for a cycle's root span, whose ids are pinned (streams/tracing/ids.py)
    for the one ``start_span`` call that creates it."""

    def generate_trace_id(self) -> int:
        pinned = PINNED.get()
        return pinned[0] if pinned else super().generate_trace_id()

    def generate_span_id(self) -> int:
        pinned = PINNED.get()
        return pinned[1] if pinned else super().generate_span_id()

    def is_trace_id_random(self) -> bool:
        return False  # derived from the cycle id: W3C's "random" flag is not claimed


def build_provider(settings: TracingSettings, role: str, exporter: SpanExporter | None = None) -> TracerProvider:
    resource = Resource.create({"om.worker.role": role})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource, id_generator=CycleIdGenerator())
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        return provider
    for name in settings.exporters():
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, settings)))
    return provider


def _exporter(name: str, settings: TracingSettings) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if settings.protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter,
            )
        except ImportError:
            raise ValueError("OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the opentelemetry-exporter-otlp-proto-grpc "
                             "package; install it, or use http/protobuf (the default)") from None
        return OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter as HttpExporter,
    )

    return HttpExporter()
