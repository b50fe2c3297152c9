"""``OMClient``: what an app needs from the pipeline, from any asyncio framework.

* **Write**: chat messages to the messages topic and control events to the control topic, each
  keyed by its lookup key (the record's owner sees them in order) through an idempotent producer,
  and every call returns only once the broker acknowledged. The message id *is* the message's
  identity, so retrying a call or re-sending history adds nothing. A broker that is away or
  electing a leader delays a call, with progress lines to ``report``, for up to
  ``OM_KAFKA_RETRY_S`` seconds without an acknowledgement; then it raises
  :class:`~streams.services.kafka_retry.KafkaUnavailable` (:mod:`streams.sdk.delivery`).
* **Watch**: lifecycle events (``observation-end``, ``status`` …) as an async iterator.
* **Read**: context, status and recall through the reader's HTTP API; :meth:`OMClient.send_and_context`
  sends a message and reads the context that shows it at once.

Kafka connections open on first use; close with :meth:`close` or ``async with OMClient() as om``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from typing import Any, Literal

from processors.context import AgentContext
from processors.machine import lookup_key
from processors.recall.request import RecallRequest
from schemas.control import ConfigOverride, ControlEvent, ThreadDeleted, TurnEnd, TurnStart
from schemas.messages import ChatMessage
from schemas.record_import import RecordImport
from streams.reader.models import ContextResponse, StatusResponse
from streams.sdk.delivery import Delivery, log_report
from streams.sdk.events import EventStream, Since
from streams.sdk.own_writes import OwnWrites
from streams.sdk.reader import ReaderClient, ReaderError
from streams.services.kafka_retry import Report
from streams.settings import Settings, get_settings
from streams.topics import Topics

Scope = Literal["thread", "resource"]
MessageLike = ChatMessage | dict[str, Any]


class OMClient:
    """``scope`` must match the workers' OM config (it picks the Kafka key); default: the config file's.
    ``report`` receives the progress lines of a broker loss (default: a WARNING log record)."""

    def __init__(self, settings: Settings | None = None, *, scope: Scope | None = None,
                 token: str | None = None, reader_url: str | None = None, report: Report = log_report) -> None:
        self.settings = settings or get_settings()
        self.topics = Topics.for_prefix(self.settings.topic_prefix)
        self.scope: Scope = scope or _configured_scope(self.settings)
        url = reader_url or f"http://{self.settings.reader_host}:{self.settings.reader_port}"
        self.reader = ReaderClient(url, token)
        self.report = report
        self.delivery = Delivery(self.settings.kafka_bootstrap, self.settings.kafka_retry_s, report)
        self.own_writes = OwnWrites()

    async def __aenter__(self) -> OMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.delivery.close()
        await self.reader.close()

    def key_for(self, thread_id: str, resource_id: str | None) -> str:
        return lookup_key(self.scope, thread_id, resource_id)

    # -- messages ------------------------------------------------------------------------------
    async def send(self, message: MessageLike) -> ChatMessage:
        """Produce one message and wait for the broker's ack; returns the validated message."""
        (sent,) = await self.send_many([message])
        return sent

    async def send_many(self, messages: Iterable[MessageLike]) -> list[ChatMessage]:
        """Produce messages in order (per key, order is kept) and wait until all are acknowledged."""
        parsed = [m if isinstance(m, ChatMessage) else ChatMessage.from_obj(m) for m in messages]
        await self.delivery.deliver(self.topics.messages, [
            (self.key_for(m.thread_id, m.resource_id).encode(), m.to_bytes()) for m in parsed])
        self.own_writes.remember(parsed)
        return parsed

    # -- control -------------------------------------------------------------------------------
    # Each names the thread's resource: the processor refuses (dead-letters) a control event from a
    # resource that does not own the thread; no ``resource_id`` stands for the thread id (Mastra's fallback).
    async def turn_start(self, thread_id: str, model: str, *, resource_id: str | None = None,
                         at: int | None = None) -> None:
        """An agent turn begins with actor model ``provider/modelId`` (drives ``'auto'`` idle TTLs)."""
        await self._control(TurnStart(thread_id=thread_id, resource_id=resource_id, model=model, at=_now(at)))

    async def turn_end(self, thread_id: str, *, resource_id: str | None = None, at: int | None = None) -> None:
        await self._control(TurnEnd(thread_id=thread_id, resource_id=resource_id, at=_now(at)))

    async def update_record_config(self, thread_id: str, config: dict[str, Any], *,
                                   resource_id: str | None = None, at: int | None = None) -> None:
        """Mastra's ``updateRecordConfig``: only ``observation.messageTokens`` and
        ``reflection.observationTokens`` may be overridden; anything else fails here."""
        await self._control(ConfigOverride(thread_id=thread_id, resource_id=resource_id, config=config,
                                           at=_now(at)))

    async def delete_thread(self, thread_id: str, *, resource_id: str | None = None, at: int | None = None) -> None:
        await self._control(ThreadDeleted(thread_id=thread_id, resource_id=resource_id, at=_now(at)))

    async def _control(self, event: ControlEvent) -> None:
        key = self.key_for(event.thread_id, event.resource_id)  # type: ignore[union-attr]
        await self.delivery.deliver(self.topics.control, [(key.encode(), event.to_bytes())])

    async def send_imports(self, parts: Iterable[RecordImport]) -> None:
        """Produce ``record-import`` parts on the control topic, keyed by their lookup key, in order,
        and wait until all are acknowledged (``om replay`` of a Mastra store with OM records)."""
        await self.delivery.deliver(self.topics.control, [(part.key.encode(), part.to_bytes()) for part in parts])

    # -- events and reads ----------------------------------------------------------------------
    def events(self, types: Iterable[str] | None = None, *, thread_id: str | None = None,
               resource_id: str | None = None, since: Since = "now") -> EventStream:
        """Lifecycle events (read_committed) from ``since`` ("now", "beginning" or epoch ms)."""
        return EventStream(self.settings.kafka_bootstrap, self.topics.events, types=types,
                           thread_id=thread_id, resource_id=resource_id, since=since,
                           retry_s=self.settings.kafka_retry_s, report=self.report)

    async def context(self, thread_id: str, resource_id: str | None = None, *,
                      wait_for_message_id: str | None = None, timeout: float = 5.0,
                      own_messages: bool = True) -> ContextResponse:
        """The context the agent sends next. Messages this client sent that the reader does not show
        yet are appended (``own_messages``; read-your-writes without waiting). ``wait_for_message_id``
        instead waits until the pipeline has folded that message (for callers that need its decisions)."""
        read = self.reader.context(thread_id, resource_id, wait_for_message_id=wait_for_message_id, timeout=timeout)
        return await self._answer(read, thread_id, resource_id, own_messages=own_messages,
                                  waited=wait_for_message_id is not None)

    async def send_and_context(self, message: MessageLike, *, wait: bool = False, timeout: float = 5.0) -> ContextResponse:
        """:meth:`send` then :meth:`context` of the message's thread, in the time of the longer of the two
        (the agent's turn before its model call, issue 19). The read does not wait for the send: the
        context shows the message as this client's own (streams/sdk/own_writes.py) and comes back only
        once the broker acknowledged it; a send that fails raises, and its read is dropped. ``wait``:
        the context once the pipeline has folded the message (``wait_for_message_id``, up to
        ``timeout`` s), the wait begun while the send is on its way."""
        parsed = message if isinstance(message, ChatMessage) else ChatMessage.from_obj(message)
        read = asyncio.ensure_future(self.reader.context(parsed.thread_id, parsed.resource_id, timeout=timeout,
                                                         wait_for_message_id=parsed.id if wait else None))
        try:
            await self.send(parsed)
        except BaseException:
            read.cancel()
            await asyncio.gather(read, return_exceptions=True)
            raise
        return await self._answer(read, parsed.thread_id, parsed.resource_id, own_messages=True, waited=wait)

    async def _answer(self, read: Awaitable[ContextResponse], thread_id: str, resource_id: str | None, *,
                      own_messages: bool, waited: bool) -> ContextResponse:
        """The reader's answer with this client's own unseen messages (``own_messages``)."""
        try:
            response = await read
        except ReaderError as error:
            # a thread's first turn: not materialised yet (404), but this client wrote to it — its
            # context so far is what it sent
            resource = self.own_writes.sent_as(thread_id, resource_id) if own_messages else None
            if error.status != 404 or waited or resource is None:
                raise
            response = ContextResponse.of(thread_id, resource, AgentContext())
        return self.own_writes.merge(response) if own_messages else response

    async def status(self, thread_id: str, resource_id: str | None = None) -> StatusResponse:
        return await self.reader.status(thread_id, resource_id)

    async def recall(self, request: RecallRequest | dict[str, Any], resource_id: str | None = None) -> dict[str, Any]:
        return await self.reader.recall(request, resource_id)


def _now(at: int | None) -> int:
    return at if at is not None else int(time.time() * 1000)


def _configured_scope(settings: Settings) -> Scope:
    """The scope in ``OM_CONFIG_FILE`` (what the workers key by), else Mastra's default."""
    if settings.config_file is None:
        return "thread"
    from streams.om_config import load_config

    return load_config(settings).scope
