"""The memory view's timeline line for the budget events (streams/ui/render.py)."""

from streams.ui.render import event_summary
from tests.unit.machine.core_driver import T0, Driver, message
from tests.unit.machine.test_budget import config, notice


def test_the_memory_view_says_what_a_budget_event_means() -> None:
    d = Driver(config())
    d.feed(message("m0", T0))
    d.feed(notice(True))
    d.feed(notice(False, used=0))
    exceeded, restored = d.events("budget-exceeded")[0], d.events("budget-restored")[0]
    assert event_summary(exceeded) == "6,000 of 5,000 tokens on 2024-11-30 · no new cycle until allowed"
    assert event_summary(restored) == "0 of 5,000 tokens on 2024-11-30 · waiting cycles start"
