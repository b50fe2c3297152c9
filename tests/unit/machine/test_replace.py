"""``replace`` (processors/machine/state.py, issue 20) is ``model_copy(update=...)`` field for field:
the same class, the same values, the same set fields, the original untouched — so the states the core
folds, and what they serialise to, do not depend on which of the two made them."""

from processors.config import OMConfig
from processors.machine.state import Counters, InFlight, KeyState, replace
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message


def a_state() -> KeyState:
    d = Driver(OMConfig.model_validate({"observation": {"message_tokens": 3000}}))
    for i in range(5):
        d.feed(message(f"m{i}", T0 + i * MINUTE, role="user" if i % 2 == 0 else "assistant"))
    return d.state


def assert_same_copy(ours, theirs) -> None:
    assert type(ours) is type(theirs)
    assert ours == theirs
    assert ours.__dict__ == theirs.__dict__
    assert ours.model_fields_set == theirs.model_fields_set
    assert ours.to_bytes() == theirs.to_bytes()


def test_a_state_copied_with_changes_equals_pydantics_copy() -> None:
    state = a_state()
    before = state.to_bytes()
    changes = {"version": state.version + 1, "clock": state.clock + 5, "last_model": "m", "window": ()}
    assert_same_copy(replace(state, changes), state.model_copy(update=changes))
    assert state.to_bytes() == before, "the original is left as it was"


def test_a_default_only_model_marks_the_changed_fields_as_set() -> None:
    counters = Counters()
    copied = replace(counters, {"stale_results": 2})
    assert_same_copy(copied, counters.model_copy(update={"stale_results": 2}))
    assert copied.model_fields_set == {"stale_results"}
    assert counters.stale_results == 0


def test_nested_models_and_no_changes() -> None:
    flight = InFlight(cycle_id="c", kind="buffer", issued_at=1, generation=0, message_ids=("a",))
    assert_same_copy(replace(flight, {}), flight.model_copy(update={}))
    record = a_state().record
    assert_same_copy(replace(record, {"updated_at": 9}), record.model_copy(update={"updated_at": 9}))


def test_a_model_with_private_attributes_takes_pydantics_path() -> None:
    config = OMConfig.model_validate({"observation": {"message_tokens": 3000}})
    copied = replace(config, {"timezone": "Europe/Paris"})
    assert copied.resolved is config.resolved
    assert copied.timezone == "Europe/Paris" and config.timezone == "UTC"
