"""A window's ids listed from its token map's keys (processors/machine/state.py ``TokenMap.in_order_for``)
are its messages' ids in its order, after inserts, late messages, replacements and observations."""

import random

from processors.config import OMConfig
from processors.machine.state import in_window_order
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message, words


def test_the_window_ids_equal_the_messages_ids_through_inserts_replacements_and_observations() -> None:
    rng = random.Random(11)
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
        state = d.state
        assert state.window_ids() == [m.id for m in state.window], f"after event {i}"
    assert d.events("observation-end") or d.events("activation"), "the run must have removed messages too"


def test_a_window_of_messages_in_order_is_listed_from_its_map() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 3000}}))
    for i in range(200):
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 else "assistant"))
        d.answer_all()
        state = d.state
        assert not state.window or in_window_order(state.message_tokens, state.window), f"after event {i}"
        assert state.window_ids() == [m.id for m in state.window]
    assert d.events("activation") or d.events("observation-end"), "the run must have removed messages too"
