from processors.extraction.inline import parse_inline_values
from processors.extraction.schema_model import validate
from processors.extraction.structured import run_structured
from processors.config import ExtractorSpec
from processors.model_port import ModelCall, ModelCallError
from tests.unit._om_fakes import ScriptedModel

import pytest

MOOD = ExtractorSpec(name="Mood", instructions="the user's mood")
LEVEL = ExtractorSpec(name="Level", instructions="skill level", json_schema={"type": "integer"}, mode="inline")
PROFILE = ExtractorSpec(name="User profile", instructions="who they are", json_schema={
    "type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]})
BUDGET = ExtractorSpec(name="Budget", instructions="budget in euros", json_schema={"type": "number"})
BASE = ModelCall(role="observer", model="x/y", messages=[{"role": "user", "content": "history"}])


def test_s49_extracted_values_json_wins_over_later_tag():
    text = '<extracted-values>{"mood":"happy"}</extracted-values>\n<mood>sad</mood>'
    values, failures = parse_inline_values(text, [MOOD])
    assert values == {"mood": "happy"} and failures == []


def test_s49_non_object_json_is_an_extracted_values_failure():
    values, failures = parse_inline_values('<extracted-values>["happy"]</extracted-values>\n<mood>ok</mood>', [MOOD])
    assert [f.slug for f in failures] == ["extracted-values"] and values == {"mood": "ok"}


def test_last_tag_wins_and_schema_decides_the_reading():
    values, failures = parse_inline_values("<level>1</level>\n<level>\n3\n</level>\n<mood>\n  calm \n</mood>", [LEVEL, MOOD])
    assert values == {"level": 3, "mood": "calm"} and failures == []
    bad, errors = parse_inline_values("<level>expert</level>", [LEVEL])
    assert bad == {} and errors[0].slug == "level"


def test_schema_builder_validates_nested_objects():
    assert validate({"name": "Ann", "age": 31}, PROFILE.json_schema) == {"name": "Ann", "age": 31}
    with pytest.raises(ValueError):
        validate({"age": 31}, PROFILE.json_schema)


async def test_structured_follow_up_validates_each_property_on_its_own():
    model = ScriptedModel('{"user-profile": {"name": "Ann"}, "budget": "lots"}')
    result = await run_structured(model, BASE, "<observations>…</observations>", [PROFILE, BUDGET], {"budget": 100})
    assert result.values == {"user-profile": {"name": "Ann"}}
    assert [f.slug for f in result.failures] == ["budget"]
    call = model.calls[0]
    assert call.role == "extractor" and set(call.json_schema["properties"]) == {"user-profile", "budget"}
    assert call.messages[-2] == {"role": "assistant", "content": "<observations>…</observations>"}
    assert '"budget":100' in call.messages[-1]["content"]  # include_previous_extraction


async def test_structured_failure_retried_once_with_json_instruction_then_reported_per_extractor():
    model = ScriptedModel("not json", ModelCallError("boom", transient=False, attempts=1))
    result = await run_structured(model, BASE, "answer", [PROFILE, BUDGET], {})
    assert len(model.calls) == 2 and "JSON object only" in model.calls[1].messages[-1]["content"]
    assert {f.slug for f in result.failures} == {"user-profile", "budget"} and result.values == {}
