"""The core decides what Mastra 1.31 decides, turn by turn, on recorded runs (issue 16).

``fixtures/*.json.gz`` are compact copies of two runs of real ``@mastra/memory`` 1.31.0
(``shared/reference/mastra-traces``; ``extract_trace.py`` wrote them): every default, and small
thresholds with 30 reflections. Replayed through ``om simulate``'s core with a cassette of Mastra's
model answers, each turn must agree on: pending tokens, the buffered chunks (messages, message and
observation tokens), every Observer call (its messages and tokens), every activation, every
Reflector cycle, the generation, the observation tokens and the observation log, byte for byte.

One recorded Mastra bug is fixed here on purpose and makes the runs part: **P1** — a new generation
drops the buffered chunks, so Mastra observes their messages again (an extra Observer call, paid
for twice). The test says where that happens, and proves every other rule the same by replaying
with the fix switched off.
"""

from __future__ import annotations

import pytest

import processors.machine.generation as generation
from tests.fidelity.replay import differences, load, replay

TRACES = ("a-defaults", "c-small-thresholds")


def _drop_chunks_like_mastra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mastra 1.31's new generation: no buffered chunks, pending tokens 0 (spec §4.8)."""
    keep_chunks = generation.roll_over

    def roll_over(step, reflection, line_count):
        keep_chunks(step, reflection, line_count)
        step.update(record=step.state.record.model_copy(update={"buffered_chunks": ()}), step_pending_tokens=0)

    for module in ("processors.machine.generation", "processors.machine.reflection",
                   "processors.machine.reflection_activation"):
        monkeypatch.setattr(f"{module}.roll_over", roll_over)


@pytest.mark.parametrize("name", TRACES)
def test_with_p1_switched_off_every_turn_agrees_with_mastra(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _drop_chunks_like_mastra(monkeypatch)
    trace = load(name)
    outcomes = replay(trace)
    assert len(outcomes) == len(trace["turns"])
    assert differences(trace, outcomes) == []


@pytest.mark.parametrize("name", TRACES)
def test_as_shipped_the_runs_agree_until_p1_and_part_only_by_it(name: str) -> None:
    trace = load(name)
    outcomes = replay(trace)
    assert len(outcomes) == len(trace["turns"]), "the cassette ran out: the core asked for a call Mastra never made"
    found = differences(trace, outcomes)
    if not found:
        return  # no reflection activated while chunks were buffered
    turn_no = found[0][0]
    index = turn_no - 1
    before, turn = trace["turns"][index - 1], trace["turns"][index]
    assert turn["expect"]["generation"] > before["expect"]["generation"], "the first difference is not at a reflection"
    assert {what for t, what, *_ in found if t == turn_no} <= {"chunks", "observer_calls"}
    # Mastra dropped the chunks it held; its next buffering call observes their messages again.
    ours = outcomes[index]
    kept = [c for c in ours.chunks if c not in [[m, t, o] for m, t, o in turn["expect"]["chunks"]]]
    mastra_call = turn["expect"]["observer_calls"][-1]
    our_call = ours.observer_calls[-1]
    re_observed = [label for chunk in kept[:-1] for label in chunk[0]]
    assert mastra_call[1] == re_observed + our_call[1]


def test_p1_the_fix_saves_the_observer_calls_mastra_repeats() -> None:
    trace = load("c-small-thresholds")
    outcomes = replay(trace)
    ours = sum(len(o.observer_calls[i][1]) for o in outcomes for i in range(len(o.observer_calls)))
    mastra = sum(len(c[1]) for t in trace["turns"] for c in t["expect"]["observer_calls"])
    assert ours < mastra  # messages sent to the Observer: each once here, some twice in Mastra
