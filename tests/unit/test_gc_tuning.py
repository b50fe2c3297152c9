"""Issue 20 item 1: the worker freezes its start-up objects out of collections and collects its
young generation less often, collection still on (streams/gc_tuning.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from streams import gc_tuning


@pytest.fixture
def restored() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_start_up_objects_are_frozen_and_young_collections_are_rarer(restored: None) -> None:
    _, middle, old = gc.get_threshold()
    gc_tuning.tune()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (gc_tuning.YOUNG, middle, old)
    assert gc.isenabled()


def test_a_cycle_made_after_start_up_is_still_freed(restored: None) -> None:
    gc_tuning.tune()

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    del a, b
    assert gc.collect() >= 2
