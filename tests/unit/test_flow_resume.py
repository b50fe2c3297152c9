"""streams/flow_resume.py: a resume of a flow already on keeps what the queues hold."""

from __future__ import annotations

from mode.utils.queues import FlowControlEvent, FlowControlQueue

from streams.flow_resume import install


class App:
    def __init__(self) -> None:
        self.flow_control = FlowControlEvent()


def _queue_with_a_record(app: App) -> FlowControlQueue:
    queue = FlowControlQueue(flow_control=app.flow_control, clear_on_resume=True)
    queue.put_nowait("job @0")
    return queue


def test_modes_own_resume_drops_what_was_queued_while_the_flow_was_on() -> None:
    """The defect: Faust resumes twice after a rebalance; the second resume emptied the queues."""
    app = App()
    app.flow_control.resume()
    queue = _queue_with_a_record(app)
    app.flow_control.resume()
    assert queue.empty()


def test_a_second_resume_keeps_the_queued_records() -> None:
    app = App()
    install(app)
    app.flow_control.resume()
    queue = _queue_with_a_record(app)
    app.flow_control.resume()
    assert queue.qsize() == 1


def test_resuming_a_stopped_flow_still_clears_the_last_generations_records() -> None:
    app = App()
    install(app)
    app.flow_control.resume()
    queue = _queue_with_a_record(app)
    app.flow_control.suspend()
    app.flow_control.resume()
    assert queue.empty() and app.flow_control.is_active()
