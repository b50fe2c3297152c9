"""The LLM agent: Observer and Reflector jobs from the jobs topic, each result delivered in its job's
transaction (the commit fence of streams/app.py), each bad job dead-lettered.

Rules this module keeps:

* The model call runs outside the fence (it may take minutes); its result and the job's ack go
  inside it, so no commit takes one without the other — except behind a slower job of the same
  partition, whose offset the commit may not pass (streams/commit_offsets.py): the result then
  commits first, and a crash re-runs the job, whose repeated result the processor drops by cycle id.
* A call the stop signal abandons is acked with no result, under commits that are off for good
  (streams/call_shutdown.py): its job is re-run after the restart.
* A result that cannot be confirmed by the broker restarts the worker in place (streams/restart.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import faust

from processors.config import OMConfig
from processors.machine import counter_for
from schemas.base import SchemaError
from schemas.dlq import DeadLetter
from schemas.jobs import decode_job
from streams import metrics
from streams.call_shutdown import CallShutdown
from streams.commit_pace import CommitPace
from streams.hooks.transform import load_hooks
from streams.llm.endpoints import configured_models
from streams.llm.jobs import run_job
from streams.restart import error_name, restart_in_place
from streams.settings import Settings
from streams.topics import Topics
from streams.transactions import Outbox

log = logging.getLogger(__name__)


def install(app: faust.App, settings: Settings, config: OMConfig, topics: Topics,
            out: dict[str, faust.TopicT], llm: Any, fence: asyncio.Lock,
            shutdown: CallShutdown, pace: CommitPace) -> None:
    """The model call runs outside the fence (it may take minutes); its result and the job's ack go
    inside it, so no commit takes one without the other — except behind a slower job of the same
    partition, whose offset the commit may not pass (streams/commit_offsets.py): the result then
    commits first, and a crash re-runs the job, whose repeated result the processor drops by cycle
    id. A call the stop signal abandons is acked with no result, under commits that are off for
    good: its job is re-run after the restart."""
    counter = counter_for(config)
    hooks = load_hooks(settings)  # at start: a bad import path fails the worker, not a cycle
    log.info("om.hooks.loaded", extra={slot: [h.path for h in named] for slot, named in hooks.slots.items()})

    async def deliver(stream: faust.StreamT, event: faust.EventT, topic: str, value: bytes) -> None:
        async with fence:
            try:
                outbox = Outbox(app)
                outbox.add(event.message.topic, event.message.partition, topic, event.key, value)
                await outbox.confirm()
            except Exception as error:  # noqa: BLE001 - the job's ack must not commit without its result
                restart_in_place("om.llm.delivery_failed", error=error_name(error), kind=topic)
            await stream.ack(event)
        pace.ask()

    @app.task
    async def load_model_library() -> None:
        """The model library's import (seconds of CPU, in a thread) as the worker starts, not in the
        first job's time: a job that makes an agent wait should not wait for an import too, nor should
        a worker already under load take the burst. Not at all when every model is offline
        (streams/llm/client.py)."""
        load = getattr(llm, "load", None)  # test doubles have none
        if load is not None:
            try:
                await load(configured_models(config))
            except Exception as error:  # noqa: BLE001 - the first call tries again and fails with its reason
                log.warning("om.llm.load_failed", extra={"error": error_name(error)})

    @app.agent(out[topics.jobs], name="om-llm", concurrency=settings.llm_concurrency)
    async def om_llm(stream: faust.StreamT) -> None:
        async for event in stream.events():
            try:
                job = decode_job(event.value)
            except SchemaError as exc:
                letter = DeadLetter.from_failure(
                    topic=event.message.topic, partition=event.message.partition,
                    offset=event.message.offset, key=event.key, value=event.value, error=exc,
                    stage="decode", failed_at=int(time.time() * 1000))
                await deliver(stream, event, topics.dlq, letter.to_bytes())
                metrics.dead_letter(letter.stage, letter.field)
                continue
            kind = metrics.job_kind(job.kind)
            with metrics.JOBS_IN_FLIGHT.labels(kind).track_inprogress():
                result = await shutdown.run(run_job(job, config, llm, counter, hooks))
            if result is None:
                await stream.ack(event)  # local only: commits are off, the restart re-runs the job
                continue
            log.info("om.job.done", extra={"cycle_id": job.cycle_id, "kind": job.kind, "ok": result.ok,
                                           "input_tokens": result.usage.input_tokens,
                                           "output_tokens": result.usage.output_tokens,
                                           "attempts": result.attempts,
                                           # the kinds only: a warning's example quotes the answer
                                           "warnings": [w.split(", e.g.")[0] for w in result.warnings or []]})
            await deliver(stream, event, topics.results, result.to_bytes())
            metrics.JOBS_DONE.labels(kind, "ok" if result.ok else "failed").inc()
            if getattr(result, "degenerate", False):
                metrics.failure("degenerate-output")
