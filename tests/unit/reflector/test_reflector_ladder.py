from processors.model_port import ModelCallError
from processors.reflector.background_slice import activation_text, background_slice
from processors.reflector.levels import last_level, start_level
from processors.reflector.runner import run_reflector
from processors.reflector.types import ReflectorMode, ReflectorRequest, ReflectorSettings
from processors.tokens import get_counter
from tests.unit._om_fakes import ScriptedModel

SOURCE = "\n".join(f"Date: Dec {d}, 2024\n* 🔴 (10:0{d}) User stated fact number {d} about the project." for d in range(1, 9))
COUNTER = get_counter()


def _answer(lines: int) -> str:
    body = "\n".join(f"* 🟡 (10:{i:02d}) condensed note {i}" for i in range(lines))
    return f"<observations>\nDate: Dec 1, 2024\n{body}\n</observations>"


def _request(target: int, mode=ReflectorMode.SYNC, model="openai/gpt-4o", **kw) -> ReflectorRequest:
    return ReflectorRequest(mode=mode, observations=SOURCE,
                            settings=ReflectorSettings(model=model, observation_tokens=target), **kw)


def test_s35_start_level_per_model():
    assert start_level(ReflectorMode.SYNC, "google/gemini-2.5-flash") == 2
    assert last_level(2) == 4
    assert start_level(ReflectorMode.BACKGROUND, "google/gemini-3.1-flash-lite") == 1
    assert start_level(ReflectorMode.SYNC, None) == 1
    assert start_level(ReflectorMode.MANUAL, "google/gemini-2.5-flash") == 0 and last_level(0) == 3


async def test_s35_gemini_flash_gets_three_attempts():
    model = ScriptedModel(_answer(40))
    outcome = await run_reflector(_request(1, model="google/gemini-2.5-flash"), model, COUNTER)
    assert outcome.levels_tried == [2, 3, 4] and len(model.calls) == 3
    assert "COMPRESSION LEVEL 2 of 4" in model.calls[0].messages[1]["content"]


async def test_s36_always_over_target_makes_four_calls_from_level_0():
    model = ScriptedModel(_answer(40))
    outcome = await run_reflector(_request(1, mode=ReflectorMode.MANUAL), model, COUNTER)
    assert len(model.calls) == 4 and outcome.levels_tried == [0, 1, 2, 3]
    assert outcome.error is None and not outcome.reached_target


async def test_s36_over_over_short_stops_at_the_short_one():
    target = COUNTER.count_observations(_answer(3).split("\n", 1)[1]) + 5
    model = ScriptedModel(_answer(40), _answer(30), _answer(3), _answer(1))
    outcome = await run_reflector(_request(target, mode=ReflectorMode.MANUAL), model, COUNTER)
    assert len(model.calls) == 3 and outcome.reached_target and outcome.level == 2
    assert "condensed note 2" in outcome.observations and "condensed note 3" not in outcome.observations


async def test_smallest_valid_candidate_kept_when_ladder_exhausted_fixes_mastra_returning_last():
    model = ScriptedModel(_answer(20), _answer(8), _answer(30), "<observations>\n</observations>")
    outcome = await run_reflector(_request(1), model, COUNTER)
    assert len(model.calls) == 4 and outcome.error is None
    assert outcome.level == 2 and outcome.token_count == COUNTER.count_observations(outcome.observations)
    assert "condensed note 7" in outcome.observations and "condensed note 8" not in outcome.observations


async def test_s37_every_attempt_degenerate_fails_without_output():
    looping = "<observations>\n" + "* 🟡 (10:00) the very same long sentence is written again\n" * 300 + "</observations>"
    model = ScriptedModel(looping)
    outcome = await run_reflector(_request(1), model, COUNTER)
    assert outcome.error and outcome.degenerate and outcome.observations == "" and len(model.calls) == 4


async def test_s37_empty_observations_for_non_empty_input_is_refused():
    model = ScriptedModel("<observations>\n</observations>")
    outcome = await run_reflector(_request(1), model, COUNTER)
    assert outcome.error and "empty" in outcome.error and not outcome.degenerate


async def test_model_failure_mid_ladder_reports_error_with_usage():
    model = ScriptedModel(_answer(40), ModelCallError("503 after retries", transient=True, attempts=9))
    outcome = await run_reflector(_request(1), model, COUNTER)
    assert outcome.error == "503 after retries" and outcome.attempts == 10 and outcome.usage.input_tokens == 10


def test_s39_background_slice_math():
    lines = "\n".join(f"line {i}" for i in range(480))
    piece = background_slice(lines, observation_tokens=24_000, threshold=40_000, buffer_activation=0.5)
    assert (piece.line_count, piece.slice_tokens, piece.target) == (400, 20_000, 15_000)
    assert piece.text.split("\n")[-1] == "line 399"
    combined = activation_text("REFLECTION", lines, piece.line_count)
    assert combined.startswith("REFLECTION\n\nline 400\n") and combined.endswith("line 479")


async def test_s39_background_mode_reflects_only_the_slice_with_three_quarter_target():
    observations = "\n".join(f"* 🟡 (10:00) note {i}" for i in range(100))
    model = ScriptedModel(_answer(2))
    request = ReflectorRequest(mode=ReflectorMode.BACKGROUND, observations=observations, observation_token_count=1000,
                               settings=ReflectorSettings(model="openai/gpt-4o", observation_tokens=400, buffer_activation=0.5))
    outcome = await run_reflector(request, model, COUNTER)
    prompt = model.calls[0].messages[1]["content"]
    assert "note 19\n" in prompt and "note 20\n" not in prompt
    assert (outcome.reflected_line_count, outcome.input_token_count, outcome.target) == (20, 200, 150)
    assert "Always output an <observations> block." in prompt
