"""What a sink is told (:class:`SinkOptions`) and what it counts (:class:`SinkStats`); the rules the
options serve are :mod:`streams.sink.service`'s."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clickhouse_connect.driver.client import Client

from processors.redaction import Redactor
from schemas.deltas import RecordSnapshot
from schemas.record import Scope
from streams.sink.contexts import Announce, Stored, Withdraw


@dataclass(frozen=True)
class SinkOptions:
    group_id: str = "om-sink"
    max_batch: int = 5000
    max_wait_ms: int = 200
    linger_ms: int = 3  # after the processor's records, a batch takes more for this long (streams/sink/batches.py)
    retry_initial_s: float = 0.2
    retry_max_s: float = 10.0
    consumer: dict[str, Any] = field(default_factory=dict)
    redactor: Redactor | None = None  # stored messages redacted like the Observer's input (OM_REDACT)
    indexer: Callable[[Client, list[RecordSnapshot]], int] | None = None  # recall search (OM_EMBEDDER)
    ledger: bool = False  # the results topic into the cost ledger (om_model_calls); the services turn it on
    announce: Announce | None = None  # handed the context rows written (the embedded reader's cache)
    stored: Stored | None = None  # handed the event rows written, after those (the embedded reader's waits)
    landing: Announce | None = None  # handed the shortcuts' context rows before their insert (the embedded reader's)
    withdraw: Withdraw | None = None  # handed the keys of rows announced before a failed write (the reader's cache)
    scope: Scope = "thread"  # the OM config's: a message is stored only under its lookup key in it
    daily_token_budget: int | None = None  # the OM config's: per resource and UTC day (streams/sink/budget.py)
    budget_sweep_s: float = 30.0
    clock: Callable[[], float] = time.time  # the budget's day
    members: Path | None = None  # where this process holds its group slot (streams/group_predecessor.py)
    starts: Client | None = None  # queries a batch's start beside the inserts of the one before (None: the sink's client)
    gather_ms: int = 0  # started batches wait up to this long to be written together (see streams/sink/service.py)


@dataclass
class SinkStats:
    batches: int = 0
    rows: int = 0
    dead_letters: int = 0
    not_materialised: int = 0  # messages the processor refuses (and dead-letters): never stored
    retries: int = 0
