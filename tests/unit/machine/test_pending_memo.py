"""The window's token total is remembered per window and carried forward by inserts and removals
(processors/machine/state.py, issue 20): after every event it equals a sum taken from scratch."""

import random

from processors.config import OMConfig
from processors.machine.state import KeyState
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message, words


def from_scratch(state: KeyState) -> int:
    return 24 + sum(state.message_tokens[m.id] for m in state.window) if state.window else 0


def test_the_remembered_total_equals_a_fresh_sum_through_inserts_replacements_and_observations() -> None:
    rng = random.Random(7)
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 3000}}))
    ids: list[str] = []
    for i in range(300):
        roll = rng.random()
        if roll < 0.15 and ids:  # the same id again with other text, while perhaps unobserved
            mid = rng.choice(ids)
            event = message(mid, T0 + i * MINUTE, text=words(rng.randint(5, 200), f"x{i}"))
        elif roll < 0.3:  # late: between earlier messages
            mid = f"late{i}"
            event = message(mid, T0 + (i - rng.randint(1, 5)) * MINUTE + 1)
        else:
            mid = f"m{i}"
            event = message(mid, T0 + i * MINUTE, role=rng.choice(["user", "assistant"]))
        ids.append(mid)
        d.feed(event)
        if rng.random() < 0.5:
            d.answer_all()
        assert d.state.pending_tokens() == from_scratch(d.state), f"after event {i}"
    assert d.events("observation-end") or d.events("activation"), "the run must have removed messages too"
