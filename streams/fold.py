"""Folding a batch of input records into key states: decode, route, decide, collect what to send.

No Kafka here: records in, records out, so the rules of the shell (dead letters, keying checks,
deletions) are testable on their own. The Faust agent hands each batch to :meth:`BatchFolder.fold`
and delivers the result inside its transaction.

Rules this module keeps:

* Every input record either changes a key's state or produces a dead letter with a readable reason;
  an exception anywhere in decoding or deciding never escapes to stall the partition.
* A record must arrive keyed by its lookup key (the key is what made it reach this owner); a record
  keyed otherwise is refused rather than folded into the wrong record.
* Nothing sent exceeds the broker's record limit (streams/topics.py): an oversized job becomes a
  failed cycle (streams/job_size.py), an observed copy that cannot fit is left out (the topic's row
  stays), a model's answer whose effects cannot fit ends its cycle failed (never in flight for good),
  any other oversized effect refuses its input; dead letters are bounded by their own envelope
  (schemas/dlq.py).
* A refused message the sink has stored anyway (it stores by the record alone:
  streams/stored_messages.py) gets a ``MessageRefused`` delta beside its dead letter, and so does a
  late message the core dropped: the sink hides the row, so the reader never serves what the
  memory does not hold (issue 18 item 4).
* Messages sent for the tables (observed copies, the core's own, a refused re-send's original) are
  redacted first when ``OM_REDACT`` is on, as the sink redacts what it stores: the records topic
  holds no more than the tables.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections import Counter
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from processors.config import OMConfig
from processors.redaction import Redactor
from processors.machine import Decision, Event, KeyState, counter_for, decide, event_key
from processors.observer.inputs import previous_shown
from schemas.base import SchemaError
from schemas.control import decode_control
from schemas.deltas import MessageInserted, MessageRefused
from schemas.dlq import DeadLetter
from schemas.jobs import ObserveResult, ReflectResult, decode_result
from schemas.messages import ChatMessage
from streams import tracing
from streams.decoded import DECODED
from streams.job_size import BoundPrevious, fit_job, too_big_result
from streams.restart import error_name
from streams.stored_messages import decoded_message, is_stored
from streams.topics import RECORD_LIMIT, Topics

log = logging.getLogger(__name__)
MAX_REFOLDS = 8  # failed results folded for one input, at most (each ends a cycle)


# An event may be dated at most this long after its record's log time (the producer's clock may run
# ahead of the broker's a little; an hour is generous). Further ahead it would move the key's clock
# and cursor so far that every later message counted as late: it is refused with a dead letter.
MAX_LEAD_MS = 3_600_000


@dataclass(frozen=True)
class InputRecord:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp_ms: int | None = None  # the record's log time (Kafka timestamp)


@dataclass(frozen=True)
class Outgoing:
    """A record to send. ``partition`` is the input's: every topic is co-partitioned by lookup key,
    and naming it explicitly is what keeps the send inside that partition's transaction."""

    topic: str
    partition: int
    key: bytes | None
    value: bytes


@dataclass
class FoldResult:
    outgoing: list[Outgoing] = field(default_factory=list)
    changed: dict[str, int] = field(default_factory=dict)
    before: dict[str, KeyState | None] = field(default_factory=dict)  # each touched key's state before the batch
    deleted: dict[str, int] = field(default_factory=dict)
    dead_letters: int = 0
    dead_letter_reasons: list[tuple[str, str | None]] = field(default_factory=list)  # (stage, field)
    results_without_state: int = 0  # Observer/Reflector results for a key with no state: dropped
    events: list[tuple[str, str | None]] = field(default_factory=list)  # (type, operation_type) of each event sent

    @property
    def event_types(self) -> set[str]:
        return {event_type for event_type, _ in self.events}

    @property
    def event_counts(self) -> Counter[tuple[str, str | None]]:
        return Counter(self.events)  # counted once per batch: a Counter per decision cost ~5 µs a message


class BatchFolder:
    def __init__(self, config: OMConfig, topics: Topics, clock: Callable[[], float] = time.time,
                 record_limit: int = RECORD_LIMIT, redactor: Redactor | None = None) -> None:
        self.config = config
        self.redactor = redactor  # OM_REDACT: messages sent for the tables are redacted as the sink's
        self.topics = topics
        self.record_limit = record_limit
        self._clock = clock
        budget, counter = config.observation.previous_observer_tokens, counter_for(config)
        self._bound_previous: BoundPrevious | None = (  # an oversized Observer job's prior log (streams/job_size.py)
            None if budget is False else lambda job: previous_shown(job.prior_observations, job.buffered_observations,
                                                                   job.pending_reflection, budget, counter))
        self._decoders: dict[str, Callable[[bytes], Any]] = {
            topics.messages: decoded_message,
            topics.control: decode_control,
            topics.results: decode_result,
        }

    def fold(self, records: list[InputRecord], states: MutableMapping[str, KeyState]) -> FoldResult:
        result = FoldResult()
        for record in records:
            try:
                self._fold_one(record, states, result)
            except SchemaError as exc:
                self._dead_letter(record, exc, "validate" if exc.field else "decode", result)
                self._hide_stored(record, states, result)
            except Exception as exc:  # a bug must cost one record, never the partition
                log.error("om.fold.error", extra={"topic": record.topic, "offset": record.offset,  # frames,
                                                  "error": error_name(exc),  # never the message: it may quote input
                                                  "frames": traceback.format_tb(exc.__traceback__)})
                self._dead_letter(record, exc, "apply", result)
                self._hide_stored(record, states, result)
        return result

    def _hide_stored(self, record: InputRecord, states: MutableMapping[str, KeyState], result: FoldResult,
                     message: ChatMessage | None = None) -> None:
        """A refusal of the row the sink stored for this messages-topic record, if it stored one; it
        puts back the message the key holds unobserved under that id, if any."""
        if record.topic != self.topics.messages:
            return
        message = message or is_stored(record.key, record.value, self.config.scope)
        if message is None or record.key is None:
            return
        key = record.key.decode()
        state = states.get(key)
        held = next((m for m in state.window if m.id == message.id), None) \
            if state is not None and message.id in state.message_tokens else None
        if held is not None and held.owner != message.owner:
            held = None  # another resource's row: the refused one is hidden, the holder's is untouched
        if held is not None and self.redactor is not None:
            held = self.redactor.message(held)
        refusal = MessageRefused(key=key, version=record.offset, at=record.timestamp_ms or int(self._clock() * 1000),
                                 message_id=message.id, thread_id=message.thread_id, owner=message.owner, held=held)
        raw = refusal.to_bytes()
        if held is not None and len(raw) + len(record.key) > self.record_limit:
            log.warning("om.delta.held_copy_oversized", extra={"key_bytes": len(record.key), "delta_bytes": len(raw)})
            raw = refusal.model_copy(update={"held": None}).to_bytes()  # hidden: the refused content never shows
        result.outgoing.append(Outgoing(self.topics.records, record.partition, record.key, raw))

    def _fold_one(self, record: InputRecord, states: MutableMapping[str, KeyState], result: FoldResult) -> None:
        if record.value is None:
            raise SchemaError("", "empty record (tombstone) on an input topic")
        event: Event = self._decoders[record.topic](record.value)
        _check_event_time(event, record.timestamp_ms)
        key = event_key(event, self.config)
        if record.key is None:
            raise SchemaError("key", f"record has no key; produce it keyed by its lookup key {key!r}")
        if record.key.decode(errors="replace") != key:
            raise SchemaError("key", f"record keyed {record.key!r} belongs to lookup key {key!r}; "
                                     "produce it with its lookup key so it reaches the right owner")
        if key not in states and isinstance(event, (ObserveResult, ReflectResult)):
            # dropped: legitimately after the key was deleted, a lost state otherwise; never silent
            result.results_without_state += 1
            log.warning("om.fold.result_without_state", extra={"partition": record.partition, "offset": record.offset,
                                                               "cycle_id": event.cycle_id})
        if key not in result.before:
            result.before[key] = states.get(key)
        decision = decide(states.get(key), event, self.config)
        if decision.rejection is not None:
            raise _Rejected(decision.rejection.field, decision.rejection.reason)
        tracing.decided(event, states.get(key), decision)  # off: a None check (streams/tracing)
        try:
            state, outgoing, events = self._effects(key, decision, record.partition)
        except _Rejected as refused:
            if not isinstance(event, (ObserveResult, ReflectResult)) or not event.ok:
                raise
            # an answer whose effects cannot be sent ends its cycle failed, as a model error would:
            # refused as a dead letter, it would leave the cycle in flight for good
            log.warning("om.result.unstorable", extra={"cycle_id": event.cycle_id, "reason": refused.reason})
            failed = event.model_copy(update={"ok": False, "error": f"the answer cannot be stored: {refused.reason}"})
            decision = decide(states.get(key), failed, self.config)
            state, outgoing, events = self._effects(key, decision, record.partition)
        if state is None:
            if states.pop(key, None) is not None or key in result.changed:
                result.changed.pop(key, None)
                result.deleted[key] = record.partition
        else:
            states[key] = state
            result.changed[key] = record.partition
            result.deleted.pop(key, None)
        result.outgoing.extend(outgoing)
        if isinstance(event, ChatMessage) and event.id in decision.dropped:
            self._hide_stored(record, states, result, event)
        result.events.extend(events)

    def _effects(self, key: str, decision: Decision,
                 p: int) -> tuple[KeyState | None, list[Outgoing], list[tuple[str, str | None]]]:
        """The records a decision sends, each within the record limit, and the state they leave.

        A job that cannot fit is not sent: its failed result is folded at once (streams/job_size.py),
        and that decision's records join the batch. Any other record over the limit refuses the
        input (a dead letter, the key's state untouched): sent, it would break the transaction."""
        key_bytes, out, types = key.encode(), [], []
        state, decisions, refolds = decision.state, [decision], 0
        while decisions:
            current = decisions.pop(0)
            state = current.state
            for job in current.jobs:
                raw = fit_job(job, key_bytes, self.record_limit, self._bound_previous)
                if raw is not None:
                    out.append(Outgoing(self.topics.jobs, p, key_bytes, raw))
                    continue
                refolds += 1
                if refolds > MAX_REFOLDS or state is None:
                    raise _Rejected("", "its jobs cannot fit the broker's record limit")
                size = len(job.to_bytes())
                log.warning("om.job.oversized", extra={"key_bytes": len(key_bytes), "job_bytes": size,
                                                       "cycle_id": job.cycle_id, "kind": job.kind})
                decisions.append(decide(state, too_big_result(job, size, self.record_limit, int(self._clock() * 1000)),
                                        self.config))
            for ev in current.events:
                raw = ev.to_bytes()
                DECODED.leave("event", raw, ev)
                out.append(Outgoing(self.topics.events, p, key_bytes, raw))
            out.extend(Outgoing(self.topics.records, p, key_bytes, raw) for raw in self._deltas(key_bytes, current))
            # vars(): a field the event's class lacks costs ~2 µs through pydantic's __getattr__
            types.extend((ev.type, vars(ev).get("operation_type")) for ev in current.events)
        oversized = [o.topic for o in out if len(o.value) + len(key_bytes) > self.record_limit]
        if oversized:
            raise _Rejected("", f"its effects exceed the broker's record limit ({self.record_limit} bytes) "
                                  f"on {sorted(set(oversized))}")
        return state, out, types

    def _deltas(self, key_bytes: bytes, decision: Decision) -> list[bytes]:
        """The decision's deltas as records; an observed copy that cannot fit is left out, warned."""
        out = []
        for delta in decision.deltas:
            if isinstance(delta, MessageInserted) and self.redactor is not None:
                delta = delta.model_copy(update={"message": self.redactor.message(delta.message)})
            raw = delta.to_bytes()
            if isinstance(delta, MessageInserted) and delta.observed and len(raw) + len(key_bytes) > self.record_limit:
                log.warning("om.delta.observed_copy_oversized", extra={"key_bytes": len(key_bytes),
                                                                       "delta_bytes": len(raw)})
                continue
            DECODED.leave("delta", raw, delta)
            out.append(raw)
        return out

    def _dead_letter(self, record: InputRecord, exc: BaseException, stage: str, result: FoldResult) -> None:
        letter = DeadLetter.from_failure(
            topic=record.topic, partition=record.partition, offset=record.offset, key=record.key,
            value=record.value, error=exc, stage=stage if not isinstance(exc, _Rejected) else "apply",
            failed_at=int(self._clock() * 1000),
        )
        result.outgoing.append(Outgoing(self.topics.dlq, record.partition, letter.key, letter.to_bytes()))
        result.dead_letters += 1
        result.dead_letter_reasons.append((letter.stage, letter.field))
        log.warning("om.dead_letter", extra={"topic": record.topic, "partition": record.partition,
                                             "offset": record.offset, "stage": letter.stage,
                                             "field": letter.field})


class _Rejected(SchemaError):
    """The core refused the event (e.g. a thread moving to another resource)."""


def _check_event_time(event: Event, log_time_ms: int | None) -> None:
    """Refuse an event dated more than :data:`MAX_LEAD_MS` after its record's log time."""
    if log_time_ms is None:
        return
    if isinstance(event, ChatMessage):
        times = [("created_at", event.created_at)] + [
            ("parts.created_at", p.created_at) for p in event.parts if p.created_at is not None]
    else:
        times = [("at", at)] if (at := getattr(event, "at", None)) is not None else []
    for name, at in times:
        if at > log_time_ms + MAX_LEAD_MS:
            raise SchemaError(name, f"event time {at} is {(at - log_time_ms) / 3_600_000:.1f} h after the record's "
                                    f"log time {log_time_ms}; at most {MAX_LEAD_MS // 60_000} min ahead is accepted "
                                    "(check the producer's clock and the field's unit: epoch milliseconds)")
