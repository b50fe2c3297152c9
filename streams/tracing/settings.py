"""When tracing is on and where spans go: the standard ``OTEL_*`` variables, read with pydantic.

* Off unless asked: ``OTEL_TRACES_EXPORTER`` names exporters (``otlp``, ``console``, comma-
  separated; ``none`` = off), or an OTLP endpoint is set (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
  ``OTEL_EXPORTER_OTLP_ENDPOINT``), which means ``otlp``. (The OpenTelemetry specification makes
  ``otlp`` the default exporter; here nothing is exported until one of them is set.)
* ``OTEL_SDK_DISABLED=true`` turns it off whatever else is set, as the specification says.
* Everything else standard is read by the SDK itself: ``OTEL_SERVICE_NAME`` and
  ``OTEL_RESOURCE_ATTRIBUTES`` (service name, default ``om-stream``), ``OTEL_TRACES_SAMPLER`` /
  ``_ARG``, ``OTEL_BSP_*`` (batching), ``OTEL_EXPORTER_OTLP_*`` (endpoint, headers, timeout,
  compression, certificates).
* ``OM_TRACE_TENANT_IDS=true`` (ours, off by default) adds thread ids, resource ids and lookup
  keys to the spans; without it they carry none (tenant data).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

EXPORTERS = ("otlp", "console")
PROTOCOLS = ("http/protobuf", "grpc")


class TracingSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    sdk_disabled: bool = Field(False, alias="OTEL_SDK_DISABLED")
    traces_exporter: str | None = Field(None, alias="OTEL_TRACES_EXPORTER")
    otlp_endpoint: str | None = Field(None, alias="OTEL_EXPORTER_OTLP_ENDPOINT")
    otlp_traces_endpoint: str | None = Field(None, alias="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    otlp_protocol: str = Field("http/protobuf", alias="OTEL_EXPORTER_OTLP_PROTOCOL")
    otlp_traces_protocol: str | None = Field(None, alias="OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    tenant_ids: bool = Field(False, alias="OM_TRACE_TENANT_IDS")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TracingSettings:
        names = {field.alias for field in cls.model_fields.values()}
        return cls.model_validate({name: value for name, value in env.items() if name in names and value.strip()})

    @field_validator("traces_exporter")
    @classmethod
    def _known_exporters(cls, value: str | None) -> str | None:
        if value is None:
            return None
        unknown = [name for name in _names(value) if name not in (*EXPORTERS, "none")]
        if unknown:
            raise ValueError(f"OTEL_TRACES_EXPORTER: unknown exporter(s) {unknown}; this build exports to "
                             f"{list(EXPORTERS)} or none")
        return value

    @field_validator("otlp_protocol", "otlp_traces_protocol")
    @classmethod
    def _known_protocol(cls, value: str | None) -> str | None:
        if value is not None and value.strip() not in PROTOCOLS:
            raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL: {value!r} is not one of {list(PROTOCOLS)}")
        return value and value.strip()

    def exporters(self) -> list[str]:
        """The exporters to start; empty = tracing off."""
        if self.sdk_disabled:
            return []
        if self.traces_exporter is not None:
            return [name for name in _names(self.traces_exporter) if name != "none"]
        return ["otlp"] if (self.otlp_traces_endpoint or self.otlp_endpoint) else []

    @property
    def protocol(self) -> str:
        return self.otlp_traces_protocol or self.otlp_protocol


def _names(value: str) -> list[str]:
    return [name.strip().lower() for name in value.split(",") if name.strip()]
