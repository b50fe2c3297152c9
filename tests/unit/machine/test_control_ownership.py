"""Issue 18, item 6: control events about a thread are refused unless their resource owns it.

Messages could never move a thread to another resource; turns, provider changes,
``updateRecordConfig`` and deletion could, so another tenant could re-tune or delete a thread.
"""

import pytest

from processors.config import OMConfig
from schemas.control import ConfigOverride, ProviderChange, ThreadDeleted, TurnEnd, TurnStart
from tests.unit.machine.core_driver import MINUTE, T0, Driver

AT = T0 + 10 * MINUTE
FOREIGN = [
    ThreadDeleted(thread_id="t1", resource_id="r2", at=AT),
    ConfigOverride(thread_id="t1", resource_id="r2", at=AT, config={"observation": {"message_tokens": 1}}),
    TurnStart(thread_id="t1", resource_id="r2", at=AT, model="openai/gpt-4o"),
    TurnEnd(thread_id="t1", resource_id="r2", at=AT),
    ProviderChange(thread_id="t1", resource_id="r2", at=AT, model="openai/gpt-4o"),
    ThreadDeleted(thread_id="t1", at=AT),  # no resource: Mastra's fallback makes it resource 't1'
]


@pytest.mark.parametrize("event", FOREIGN, ids=lambda e: f"{e.kind}-{e.resource_id}")
def test_a_control_event_from_another_resource_is_refused_and_changes_nothing(event) -> None:
    d = Driver(OMConfig())
    d.talk(4)
    before = d.state
    decision = d.feed(event)
    assert decision.rejection is not None and decision.rejection.field == "resource_id"
    assert "belongs to resource 'r1'" in decision.rejection.reason
    assert decision.state == before and not decision.deltas and not decision.events and not decision.jobs


def test_the_owner_s_control_events_still_apply() -> None:
    d = Driver(OMConfig())
    d.talk(4)
    tuned = d.feed(ConfigOverride(thread_id="t1", resource_id="r1", at=AT,
                                  config={"observation": {"message_tokens": 5000}}))
    assert tuned.rejection is None
    assert tuned.state.record.config_overrides == {"observation": {"message_tokens": 5000}}
    deleted = d.feed(ThreadDeleted(thread_id="t1", resource_id="r1", at=AT))
    assert deleted.rejection is None and deleted.state is None
    assert [type(x).__name__ for x in deleted.deltas] == ["KeyDeleted"]


def test_a_thread_whose_resource_is_its_own_id_accepts_events_that_name_no_resource() -> None:
    from tests.unit.machine.core_driver import message

    d = Driver(OMConfig())
    d.feed(message("m0", T0, resource=None))  # Mastra: no resource means the thread id
    assert d.feed(TurnEnd(thread_id="t1", at=AT)).rejection is None
