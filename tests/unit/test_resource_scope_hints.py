"""Resource scope sends each thread's previous continuation hints to the Observer, as thread scope
does, and keeps what the Observer writes for each thread (spec §4.9, issue 17).

The core issues the job, the worker's job code runs it against a scripted model, the core applies
the result; the next cycle's job and prompt must carry each thread's hints back.
"""

from __future__ import annotations

from processors.config import OMConfig
from processors.tokens import get_counter
from schemas.jobs import ObserveJob
from streams.llm.jobs import run_job
from tests.unit._om_fakes import ScriptedModel
from tests.unit.machine.core_driver import MINUTE, T0, Driver, message

CONFIG = OMConfig.model_validate({"scope": "resource", "model": "openai/gpt-4o", "observation": {"message_tokens": 500}})
COUNTER = get_counter()


def _answer(round_: int) -> str:
    return (
        "<observations>\n"
        + "".join(
            f'<thread id="{t}">\nDate: Nov 30, 2024\n* 🔴 (20:53) User stated round {round_} in {t}.\n'
            f"<current-task>\nround {round_} task of {t}\n</current-task>\n"
            f"<suggested-response>\nround {round_} reply in {t}\n</suggested-response>\n</thread>\n"
            for t in ("t1", "t2")
        )
        + "</observations>"
    )


def _talk_until_a_job(d: Driver, start: int, prefix: str) -> ObserveJob:
    for i in range(40):
        d.feed(message(f"{prefix}{i}", start + i * MINUTE, role="user" if i % 2 == 0 else "assistant",
                       thread="t1" if i % 4 < 2 else "t2"))
        jobs = [j for j in d.jobs if j.kind == "observe"]
        if jobs:
            return jobs[0]
    raise AssertionError("no observation job was issued")


async def _run(d: Driver, job: ObserveJob, model: ScriptedModel) -> None:
    d.jobs.remove(job)
    d.feed(await run_job(job, CONFIG, model, COUNTER))


async def test_each_threads_hints_go_back_to_the_observer_on_the_next_cycle():
    d = Driver(CONFIG)
    first = _talk_until_a_job(d, T0, "a")
    assert first.scope == "resource" and {m.thread_id for m in first.messages} == {"t1", "t2"}
    model = ScriptedModel(_answer(1), _answer(2))
    await _run(d, first, model)
    assert d.state.threads["t1"].current_task == "round 1 task of t1"
    assert d.state.threads["t2"].suggested_response == "round 1 reply in t2"

    second = _talk_until_a_job(d, T0 + 100 * MINUTE, "b")
    assert second.thread_priors and second.thread_priors["t1"].current_task == "round 1 task of t1"
    assert second.thread_priors["t2"].suggested_response == "round 1 reply in t2"
    await _run(d, second, model)
    task = model.calls[1].messages[1]["content"]
    assert "- thread t1\n  - prior current-task: round 1 task of t1\n  - prior suggested-response: round 1 reply in t1" in task
    assert "- thread t2\n  - prior current-task: round 1 task of t2" in task
    assert d.state.threads["t2"].current_task == "round 2 task of t2"
    observations = d.state.record.active_observations
    assert observations.count('<thread id="t1">') == 1 and "round 2 in t1" in observations


async def test_a_thread_the_model_skipped_keeps_its_previous_hints():
    d = Driver(CONFIG)
    await _run(d, _talk_until_a_job(d, T0, "a"), ScriptedModel(_answer(1)))
    only_t2 = _answer(2).split('<thread id="t2">')[1]
    await _run(d, _talk_until_a_job(d, T0 + 100 * MINUTE, "b"),
               ScriptedModel('<observations>\n<thread id="t2">' + only_t2))
    assert d.state.threads["t1"].current_task == "round 1 task of t1"
    assert d.state.threads["t2"].current_task == "round 2 task of t2"
