"""Issue 18 item 2: a batch is acknowledged only once the broker accepted every record it sent.

``confirm`` is what the processor and the LLM agent await before acking; a refusal must raise (the
worker then restarts in place instead of committing the transaction around the missing record).
"""

from __future__ import annotations

import asyncio

import pytest
from aiokafka.errors import MessageSizeTooLargeError

from streams.transactions import DeliveryFailed, confirm


def _done(outcome: object) -> asyncio.Future:
    future = asyncio.get_running_loop().create_future()
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
    return future


async def test_every_accepted_delivery_confirms() -> None:
    await confirm([_done("meta-1"), _done("meta-2")])


async def test_one_refused_record_fails_the_batch_naming_only_the_error_type() -> None:
    with pytest.raises(DeliveryFailed) as caught:
        await confirm([_done("meta-1"), _done(MessageSizeTooLargeError("user text here")), _done("meta-3")])
    assert "1 of 3" in str(caught.value) and "MessageSizeTooLargeError" in str(caught.value)
    assert "user text" not in str(caught.value)


async def test_a_pending_delivery_is_awaited_not_skipped() -> None:
    pending = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(confirm([pending]))
    await asyncio.sleep(0)
    assert not waiting.done()
    pending.set_exception(MessageSizeTooLargeError())
    with pytest.raises(DeliveryFailed):
        await waiting
