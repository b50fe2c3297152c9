"""Work orders from the processor to the LLM workers, and what the workers send back.

A job is self-contained: the worker needs no OM state to run it (it holds none), only the job and its
own model configuration. A result names its ``cycle_id``; the processor applies it only if the cycle
is still the one it is waiting for (compare-and-set inside the fold, ARCHITECTURE rule 4), so a
duplicate or late result is dropped and counted, never applied twice.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag

from schemas.base import VersionedModel, WireModel
from schemas.messages import ChatMessage
from schemas.record import Scope
from schemas.tagged import decode_tagged, members_by_tag, tag_reader

ObserveMode = Literal["sync", "buffer"]
ReflectMode = Literal["sync", "background"]


class PriorMetadata(WireModel):
    """A thread's continuity values (spec §5.2 "Prior Thread Metadata", §4.9).

    What the Observer and the Reflector are shown from the previous round, and, in a resource-scope
    result, what the Observer wrote for one thread this round.
    """

    current_task: str | None = None
    suggested_response: str | None = None
    thread_title: str | None = None
    extracted: dict[str, Any] = Field(default_factory=dict)


class PendingReflection(WireModel):
    """A buffered reflection not yet activated: it stands in for the first ``line_count`` lines."""

    text: str
    line_count: int = Field(ge=0)


class JobHeader(VersionedModel):
    cycle_id: str = Field(min_length=1)
    key: str = Field(min_length=1)
    scope: Scope = "thread"
    thread_id: str | None = None
    resource_id: str
    record_id: str
    generation: int = Field(ge=0)
    issued_at: int = Field(ge=0, description="event time (ms) at which the processor decided")


class ObserveJob(JobHeader):
    """Observe ``messages``: synchronously (the threshold was crossed) or as a background chunk."""

    kind: Literal["observe"] = "observe"
    mode: ObserveMode
    messages: list[ChatMessage]
    tokens_to_observe: int = Field(ge=0)
    prior_observations: str = ""
    buffered_observations: list[str] = Field(default_factory=list)
    pending_reflection: PendingReflection | None = None
    previous_truncated: bool | None = Field(
        default=None, description="``prior_observations`` is already what the Observer will be shown, cut "
        "to ``previous_observer_tokens`` (streams/job_size.py, a job that did not fit otherwise); None = "
        "the log whole, as the core made it")
    prior_metadata: PriorMetadata = Field(default_factory=PriorMetadata)
    thread_priors: dict[str, PriorMetadata] | None = Field(
        default=None, description="resource scope: each thread's values, by thread id"
    )
    continuation_hints: bool = True
    timezone: str = "UTC"
    working_memory: str | None = Field(default=None, description="current block, when the Observer manages it")


class ReflectJob(JobHeader):
    """Reflect the first ``line_count`` lines of the generation's observations."""

    kind: Literal["reflect"] = "reflect"
    mode: ReflectMode
    observations: str
    line_count: int = Field(ge=0)
    input_tokens: int = Field(ge=0)
    target_tokens: int = Field(ge=0)
    start_level: int = Field(ge=0, le=4)
    continuation_hints: bool = True
    prior_metadata: PriorMetadata | None = Field(
        default=None, description="the thread's current values (hints, extracted), carried forward by the Reflector"
    )


class Usage(WireModel):
    """Tokens the provider billed; summed over every attempt of a cycle.

    ``input_tokens`` counts every prompt token, the cached ones included; ``cached_input_tokens``
    is the part of them the provider read from its prompt cache (billed at a lower price), and
    ``cache_write_input_tokens`` the part it wrote to the cache (Anthropic bills those higher). Both
    are left off the wire while 0, so a result without cache use reads as before in an older
    reader, and a record of an older worker, which has no such field, reads as 0.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = Field(default=0, ge=0, exclude_if=lambda tokens: tokens == 0)
    cache_write_input_tokens: int = Field(default=0, ge=0, exclude_if=lambda tokens: tokens == 0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_input_tokens=self.cache_write_input_tokens + other.cache_write_input_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class ResultHeader(VersionedModel):
    cycle_id: str = Field(min_length=1)
    key: str = Field(min_length=1)
    generation: int = Field(ge=0)
    ok: bool
    started_at: int = Field(ge=0)
    completed_at: int = Field(ge=0)
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 1
    model: str | None = Field(default=None, description="the model that answered, for the cost ledger; None from "
                              "older workers")
    resource_id: str | None = Field(default=None, description="the job's resource, for the cost ledger")
    warnings: list[str] | None = Field(default=None, description="what the parser had to repair or "
                                       "found missing in the model's answer (issue 24); None = none")
    traceparent: str | None = Field(default=None, max_length=128, description="W3C trace context of the "
                                    "worker's span for this job, when tracing is on there (streams/tracing); "
                                    "None = off, or an older worker")


class ObserveResult(ResultHeader):
    kind: Literal["observe-result"] = "observe-result"
    mode: ObserveMode
    observations: str = ""
    current_task: str | None = None
    suggested_response: str | None = None
    thread_title: str | None = None
    extracted_values: dict[str, Any] | None = None
    extraction_failures: list[dict[str, Any]] | None = None
    thread_values: dict[str, PriorMetadata] | None = Field(
        default=None, description="resource scope: what the Observer wrote for each thread, by thread id"
    )
    degenerate: bool = False


class ReflectResult(ResultHeader):
    kind: Literal["reflect-result"] = "reflect-result"
    mode: ReflectMode
    observations: str = ""
    current_task: str | None = None
    suggested_response: str | None = None
    extracted_values: dict[str, Any] | None = Field(
        default=None, description="the custom extractors' values (reflection.extract), by slug"
    )
    extraction_failures: list[dict[str, Any]] | None = None
    compression_level: int | None = None


Job = Annotated[
    Union[Annotated[ObserveJob, Tag("observe")], Annotated[ReflectJob, Tag("reflect")]],
    Discriminator(tag_reader("kind")),
]
JobResult = Annotated[
    Union[
        Annotated[ObserveResult, Tag("observe-result")],
        Annotated[ReflectResult, Tag("reflect-result")],
    ],
    Discriminator(tag_reader("kind")),
]


_JOB_KINDS = members_by_tag(Job)
_RESULT_KINDS = members_by_tag(JobResult)


def decode_job(data: bytes | str) -> ObserveJob | ReflectJob:
    return decode_tagged(data, "kind", _JOB_KINDS)  # type: ignore[return-value]


def decode_result(data: bytes | str) -> ObserveResult | ReflectResult:
    return decode_tagged(data, "kind", _RESULT_KINDS)  # type: ignore[return-value]
