"""Buffering trigger and activation arithmetic — spec §10.2 scenarios 12, 20–22."""

import pytest

from processors.machine.token_math import chunks_to_activate, projected_message_removal, should_trigger_buffer


@pytest.mark.parametrize(
    ("pending", "boundary", "expected"),
    [(5999, 0, False), (6000, 0, True), (11999, 6000, False), (12000, 6000, True), (23400, 18000, True)],
)
def test_s12_should_trigger_async_observation(pending: int, boundary: int, expected: bool) -> None:
    assert should_trigger_buffer(pending, boundary, 30000, 6000) is expected


def test_s12_ramp_halves_the_interval_only_past_the_ramp_point() -> None:
    assert not should_trigger_buffer(21000, 18000, 30000, 6000)
    assert should_trigger_buffer(24000, 21000, 30000, 6000)
    assert should_trigger_buffer(27000, 24000, 30000, 6000)


def test_s12_never_triggers_at_or_above_the_threshold() -> None:
    assert not should_trigger_buffer(30000, 27000, 30000, 6000)


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [([5000, 5000, 5000], 3), ([8000, 9000], 2), ([3000, 25000], 1)],
)
def test_s20_storage_swap_ratio(chunks: list[int], expected: int) -> None:
    assert chunks_to_activate(chunks, 25000, 30000, 0.7) == expected


def test_s20_absolute_retention_floor() -> None:
    ratio = 1 - 5000 / 30000
    assert chunks_to_activate([4000, 4000, 4000], 15000, 30000, ratio) == 3


def test_s21_force_max_activation_allows_the_overshoot() -> None:
    assert chunks_to_activate([30000, 98000], 130000, 100000, 0.5, force_max=True) == 2
    assert chunks_to_activate([30000, 98000], 130000, 100000, 0.5) == 1


def test_s22_conformance_ratio_boundaries() -> None:
    assert chunks_to_activate([700, 700], 1400, 1000, 0.0) == 1
    assert chunks_to_activate([700], 700, 1000, 1.0) == 1
    assert chunks_to_activate([600, 600], 1200, 1000, 0.5) == 1


def test_s23_no_chunks_activates_nothing() -> None:
    assert chunks_to_activate([], 25000, 30000, 0.8) == 0


def test_projected_removal_is_zero_when_nothing_needs_removing() -> None:
    assert projected_message_removal([5000], 5000, 30000, 0.8) == 0
    assert projected_message_removal([8000, 9000], 25000, 30000, 0.7) == 17000


def test_activation_sizes_from_the_pending_count_of_the_previous_step_not_the_live_one() -> None:
    """Issue 16.3 (spec §4.5 step 5): Mastra passes the pending tokens its last step persisted. With the
    live count, which already holds the new user message, one chunk too many activates."""
    chunks, threshold, ratio = [6508, 6638, 4972, 6698, 3352], 30_000, 0.8
    persisted, live = 29_900, 31_500  # the step before the user's 1,600-token message, and after it
    assert chunks_to_activate(chunks, persisted, threshold, ratio) == 4
    assert chunks_to_activate(chunks, live, threshold, ratio) == 5
