"""Thousands of seeded interleavings of the core, checked step by step (see fuzz_harness).

Replay one seed with ``OM_FUZZ_SEED=<n> .venv/bin/pytest tests/unit/machine/test_decide_fuzz.py``;
run more with ``OM_FUZZ_SEEDS=<count>``.
"""

import os

import pytest

from tests.unit.machine.fuzz_harness import run_seed

ONLY = os.environ.get("OM_FUZZ_SEED")
SEEDS = [int(ONLY)] if ONLY else list(range(int(os.environ.get("OM_FUZZ_SEEDS", "2000"))))
CHUNK = 100


@pytest.mark.parametrize("first", range(0, len(SEEDS), CHUNK))
def test_interleavings_keep_the_invariants(first: int) -> None:
    for seed in SEEDS[first:first + CHUNK]:
        run_seed(seed)
