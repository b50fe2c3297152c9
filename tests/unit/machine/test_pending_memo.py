"""The window's token total is remembered per window and carried forward by inserts and removals
(processors/machine/state.py, issue 20): after every event it equals a sum taken from scratch."""

from processors.config import OMConfig
from processors.machine.state import KeyState
from tests.unit.machine.core_driver import Driver, mixed_arrivals


def from_scratch(state: KeyState) -> int:
    return 24 + sum(state.message_tokens[m.id] for m in state.window) if state.window else 0


def test_the_remembered_total_equals_a_fresh_sum_through_inserts_replacements_and_observations() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 3000}}))
    for i in mixed_arrivals(d, 7):
        assert d.state.pending_tokens() == from_scratch(d.state), f"after event {i}"
    assert d.events("observation-end") or d.events("activation"), "the run must have removed messages too"
