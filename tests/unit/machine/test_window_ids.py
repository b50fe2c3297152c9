"""A window's ids listed from its token map's keys (processors/machine/state.py ``TokenMap.in_order_for``)
are its messages' ids in its order, after inserts, late messages, replacements and observations."""

from processors.config import OMConfig
from processors.machine.state import in_window_order
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message, mixed_arrivals


def test_the_window_ids_equal_the_messages_ids_through_inserts_replacements_and_observations() -> None:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 3000}}))
    for i in mixed_arrivals(d, 11):
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
