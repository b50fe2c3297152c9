import asyncio
import random

import pytest

from streams.llm.retry import RetryError, RetryPolicy, backoff_delay, is_transient, with_retry


class StatusError(Exception):
    def __init__(self, message: str, status_code=None, code=None):
        super().__init__(message)
        self.status_code = status_code
        self.code = code


@pytest.mark.parametrize("error", [
    StatusError("slow down", status_code=429),
    StatusError("bad gateway", status_code=502),
    StatusError("x", status_code=408),
    StatusError("x", code="425"),
    StatusError("x", code="UND_ERR_SOCKET"),
    Exception("fetch failed"),
    Exception("read ECONNRESET"),
    Exception("Socket hang up"),
    TimeoutError("deadline"),
])
def test_transient_errors_are_retried(error):
    assert is_transient(error)


@pytest.mark.parametrize("error", [
    StatusError("invalid api key", status_code=401),
    StatusError("request terminated by policy", status_code=400),
    ValueError("schema mismatch"),
    asyncio.CancelledError(),
])
def test_permanent_errors_and_cancellation_are_not(error):
    assert not is_transient(error)


def test_transient_cause_is_found_down_the_chain():
    wrapper = RuntimeError("observer failed")
    wrapper.__cause__ = StatusError("overloaded", status_code=503)
    assert is_transient(wrapper)
    flagged = Exception("custom")
    flagged.isRetryable = True
    assert is_transient(flagged)


def test_backoff_doubles_caps_and_jitters_within_bounds():
    policy = RetryPolicy(base_delay=1, max_delay=120, jitter=0.2)
    rng = random.Random(3)
    delays = [backoff_delay(policy, n, rng) for n in range(10)]
    for n, delay in enumerate(delays):
        nominal = min(120, 2**n)
        assert nominal * 0.8 <= delay <= nominal * 1.2
    assert backoff_delay(RetryPolicy(jitter=0), 20) == 120


async def test_retry_until_success_counts_attempts_without_waiting():
    slept: list[float] = []
    failures = [StatusError("rate", status_code=429)] * 2

    async def attempt():
        if failures:
            raise failures.pop()
        return "ok"

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    result, attempts = await with_retry(attempt, RetryPolicy(jitter=0), sleep)
    assert (result, attempts, slept) == ("ok", 3, [1.0, 2.0])


async def test_retry_bound_and_permanent_errors_stop():
    async def always_429():
        raise StatusError("rate", status_code=429)

    async def no_sleep(_):
        return None

    with pytest.raises(RetryError) as exhausted:
        await with_retry(always_429, RetryPolicy(max_retries=2), no_sleep)
    assert exhausted.value.attempts == 3 and exhausted.value.transient

    async def bad_request():
        raise StatusError("nope", status_code=400)

    with pytest.raises(RetryError) as permanent:
        await with_retry(bad_request, RetryPolicy(max_retries=5), no_sleep)
    assert permanent.value.attempts == 1 and not permanent.value.transient
