"""A transaction's first partitions, asked for just after the commit before it, are retried in
milliseconds, not after aiokafka's fixed 20 ms.

After a commit the broker still writes the transaction's markers for a few milliseconds; a new
transaction's ``AddPartitionsToTxn`` in that window is answered ``CONCURRENT_TRANSACTIONS``, and
aiokafka (0.12, ``AddPartitionsToTxnHandler``; KAFKA-5477) waits ``BACKOFF_OVERRIDE`` = 20 ms before
asking again. The worker's next batch after a commit always starts a transaction, so that 20 ms sat
in every waited turn of an agent that sends its reply and then its next message (issue 19 item 2:
a waited read costs no more than the commit interval plus one read). Measured on the local broker, a
transactional producer's first send after a commit, p50: 24 ms with the fixed wait, 4.7 ms retrying
every 2 ms (the markers take ~2–4 ms there).

Rule kept: only that answer's wait changes. It grows from ``FIRST_S`` and doubles on each answer in
a row, up to aiokafka's own 20 ms, so a broker slow to write its markers is asked no more often than
before once the wait reached it; any other answer resets it. Every other error keeps aiokafka's rule.
"""

from __future__ import annotations

from typing import Any

from aiokafka.producer import sender as aiokafka_sender

FIRST_S = 0.001
_DOUBLINGS = 8  # 1 ms * 2**8 is past aiokafka's 20 ms
_handler = aiokafka_sender.AddPartitionsToTxnHandler
_aiokafka_rule = _handler.handle_response
_ATTEMPTS = "_om_concurrent_txn_attempts"  # kept on the producer's transaction manager, one per producer


def _handle_response(self: Any, resp: Any) -> float | None:
    backoff = _aiokafka_rule(self, resp)
    manager = self._sender._txn_manager
    if backoff != aiokafka_sender.BACKOFF_OVERRIDE:
        setattr(manager, _ATTEMPTS, 0)
        return backoff
    attempts = getattr(manager, _ATTEMPTS, 0)
    setattr(manager, _ATTEMPTS, min(attempts + 1, _DOUBLINGS))  # bounded: a stuck broker answers for ever
    return min(FIRST_S * 2**attempts, aiokafka_sender.BACKOFF_OVERRIDE)


def install() -> None:
    """Every aiokafka producer of this process (idempotent)."""
    _handler.handle_response = _handle_response  # type: ignore[method-assign]
