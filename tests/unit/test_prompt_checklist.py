"""Every rule in the Observer/Reflector checklists is carried by the prompt it names (issue 17).

The checklists are ``processors/observer/README.md`` and ``processors/reflector/README.md``;
each rule line names the prompts ("scopes") it belongs to and quotes the exact phrase that carries
it. Here every scope is rendered the way a real call renders it (all sections a call can ask for
switched on) and each quoted phrase must occur in every scope the rule names, whitespace aside.
Removing a rule's sentence from a prompt, or a rule from the checklist format, fails this test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from processors.extraction.pipeline import builtin_extractors
from processors.observer.system_prompt import observer_system_prompt
from processors.observer.task_prompt import multi_thread_task_prompt, task_prompt
from processors.observer.types import PriorMetadata
from processors.reflector.levels import MAX_LEVEL, guidance
from processors.reflector.prompts import reflector_prompt, reflector_system_prompt

ROOT = Path(__file__).resolve().parents[2]
CHECKLISTS = {
    "observer": ROOT / "processors" / "observer" / "README.md",
    "reflector": ROOT / "processors" / "reflector" / "README.md",
}
RULE = re.compile(r'^- (?P<id>[A-Z]+(?:-[A-Z0-9]+)+) · (?P<scopes>[a-z0-9, -]+) · (?P<rule>.+?) · "(?P<phrase>.+)"$')
ALL_SECTIONS = builtin_extractors(current_task=True, suggested_response=True, thread_title=True)
PRIOR = PriorMetadata(current_task="plan the trip", suggested_response="ask about dates", thread_title="Trip")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _scopes() -> dict[str, str]:
    previous = "Date: Mar 3, 2025\n* 🔴 (09:12) User stated they live in Ghent."
    scopes = {
        "observer-single": observer_system_prompt(ALL_SECTIONS, instruction="Be brief."),
        "observer-multi": observer_system_prompt(ALL_SECTIONS, multi_thread=True, instruction="Be brief."),
        "observer-task": task_prompt(previous, PRIOR, ALL_SECTIONS, truncated=True, always_output=True),
        "observer-multi-task": multi_thread_task_prompt(previous, {"t1": PRIOR}, ALL_SECTIONS, truncated=True),
        "reflector": reflector_system_prompt(
            builtin_extractors(current_task=True, suggested_response=True, thread_title=False), "Be brief."
        ),
        "reflector-prompt": reflector_prompt(
            previous, 0, specific_guidance="Focus on travel.", prior_extracted={"mood": "calm"}, always_output=True,
            asked=builtin_extractors(current_task=True, suggested_response=True, thread_title=False),
        ),
    }
    scopes |= {f"level-{n}": guidance(n) for n in range(1, MAX_LEVEL + 1)}
    return {name: _flat(text) for name, text in scopes.items()}


SCOPES = _scopes()
ALIASES = {"observer": ("observer-single", "observer-multi")}


def _rules(role: str) -> list[dict[str, str]]:
    text = CHECKLISTS[role].read_text(encoding="utf-8")
    rules = []
    for line in text.splitlines():
        if line.startswith("- ") and " · " in line:
            found = RULE.match(line)
            assert found, f"{CHECKLISTS[role].name}: malformed checklist line: {line}"
            rules.append(found.groupdict())
    return rules


RULES = [(role, rule) for role in CHECKLISTS for rule in _rules(role)]


def test_checklists_are_substantial_and_ids_unique():
    ids = [rule["id"] for _, rule in RULES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    by_role = {role: sum(1 for r, _ in RULES if r == role) for role in CHECKLISTS}
    assert by_role["observer"] >= 90 and by_role["reflector"] >= 50, by_role
    prefixes = {rule["id"].split("-")[0] for _, rule in RULES}
    assert {"O", "X", "R"} <= prefixes


def _missing(rule: dict[str, str], scopes: dict[str, str]) -> list[str]:
    """The scopes named by ``rule`` whose prompt lacks the rule's phrase."""
    phrase = _flat(rule["phrase"])
    names = [n for s in rule["scopes"].split(",") for n in ALIASES.get(s.strip(), (s.strip(),))]
    unknown = [n for n in names if n not in scopes]
    assert not unknown, f"{rule['id']}: unknown scope(s) {unknown}"
    return [n for n in names if phrase not in scopes[n]]


@pytest.mark.parametrize(("role", "rule"), RULES, ids=[rule["id"] for _, rule in RULES])
def test_rule_is_carried_by_its_sentence(role: str, rule: dict[str, str]):
    missing = _missing(rule, SCOPES)
    assert not missing, f"{rule['id']} ({rule['rule']}): \"{rule['phrase']}\" missing from {missing}"


def test_dropping_a_sentence_is_detected():
    """The check is not vacuous: a prompt without one rule's sentence no longer carries it."""
    rule = next(x for _, x in RULES if x["id"] == "O-DATES-3")
    without = dict(SCOPES, **{"observer-multi": SCOPES["observer-multi"].replace(_flat(rule["phrase"]), "")})
    assert _missing(rule, SCOPES) == [] and _missing(rule, without) == ["observer-multi"]


def test_tags_appear_only_when_their_section_is_asked_for():
    """A buffered call asks for no continuation hints: its prompts must not name those tags."""
    bare = observer_system_prompt([]) + reflector_system_prompt([])
    for tag in ("<current-task>", "<suggested-response>", "<thread-title>"):
        assert tag not in bare
    assert "<current-task>" in SCOPES["observer-single"] and "<suggested-response>" in SCOPES["reflector"]


def test_system_prompts_are_comparable_in_depth_to_mastras():
    """Mastra 1.31's Observer instructions are ~17k characters, its Reflector's ~21k."""
    assert len(SCOPES["observer-single"]) > 14_000 and len(SCOPES["reflector"]) > 17_000
