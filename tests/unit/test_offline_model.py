"""The offline model (``om-deterministic``): an Observer that keeps facts and drops chatter, and a
Reflector that shrinks with each compression level without losing what the user stated."""

from __future__ import annotations

from datetime import date

from processors.observer.parse import parse_observer_answer
from processors.config import BUILTIN_EXTRACTORS
from processors.tokens import get_counter
from streams.llm.deterministic.observe import observe
from streams.llm.deterministic.reflect import compress
from streams.llm.deterministic.relative_dates import resolve

HISTORY = """## New Message History to Observe
Nov 26 2026:
User (9:02 AM): Hi! I'm Maya. We booked the Memmo hotel, confirmation MPR-1.
Assistant (9:03 AM): Wonderful! Enjoy your stay. Want me to plan the days?
User (9:05 AM): Thanks! I'm allergic to peanuts. Can you find a vegan place for next Tuesday?
Nov 27 2026:
User (2:12 PM): I changed my mind: we switched to Lumiares. Also I cancelled Memmo.
Assistant (2:13 PM): Lumiares has river view suites at 195 euros a night."""
SYSTEM = "<current-task>\n…\n</current-task>\n<suggested-response>\n…\n</suggested-response>"


def test_observer_keeps_facts_drops_chatter_and_resolves_dates():
    answer = observe(SYSTEM, "", HISTORY)
    parsed = parse_observer_answer(answer, BUILTIN_EXTRACTORS)
    log = parsed.observations
    assert parsed.warnings == [], parsed.warnings
    assert "Wonderful" not in log and "Enjoy" not in log and "Thanks" not in log and "Hi" not in log
    assert "* 🔴 (09:02) User is Maya\n* ✅ (09:02) User: they booked the Memmo hotel, confirmation MPR-1" in log
    assert "* 🔴 (09:05) User is allergic to peanuts" in log
    assert "for next Tuesday? (meaning Dec 1, 2026)" in log  # Nov 26, 2026 is a Thursday
    assert "switched from Memmo to Lumiares" in log and "cancelled Memmo (MPR-1)" in log
    assert "195 euros" in log and log.count("Date: ") == 2
    assert parsed.current_task == "Waiting for the user"  # its one question got a reply after it
    open_question = observe(SYSTEM, "", HISTORY.split("\nNov 27 2026:")[0])
    assert "<current-task>\nPrimary: asked to find a vegan place for next Tuesday?\n</current-task>" in open_question
    assert observe(SYSTEM, "", HISTORY) == answer


def test_a_restatement_of_previous_observations_is_not_noted_again():
    previous = "Date: Nov 26, 2026\n* 🔴 (09:05) User is allergic to peanuts"
    again = "## New Message History to Observe\nNov 28 2026:\nUser (8:00 AM): I'm allergic to peanuts."
    assert "peanuts" not in observe("", previous, again)


def test_relative_dates():
    thursday = date(2026, 11, 26)
    assert resolve("see you tomorrow", thursday).note == "(meaning Nov 27, 2026)"
    assert resolve("it was last Monday", thursday).note == "(meaning Nov 23, 2026)"
    assert resolve("by Friday", thursday).note == "(meaning Nov 27, 2026)"
    assert resolve("I hurt it last month", thursday).note == "(estimated mid-Oct 2026)"
    assert resolve("on Tuesday May 12", thursday) is None


LOG = "\n".join([
    "Date: Nov 26, 2026",
    "* ✅ (09:02) User booked Memmo; confirmation MPR-1",
    "* 🟡 (09:03) Assistant: Memmo has a rooftop pool at 210 euros; breakfast included",
    "* 🟢 (09:04) Reasoning: thinking about hotels",
    "* 🔴 (09:05) User is allergic to peanuts; Tomás hates early flights",
    "--- message boundary (2026-11-26T09:05:00Z) ---",
    "Date: Nov 26, 2026",
    "* 🔴 (11:00) User wants dinner at Prado on May 14",
    "Date: Nov 27, 2026",
    "* 🔴 (14:12) User switched hotel from Memmo to Lumiares",
    "* ✅ (14:15) User cancelled Memmo (MPR-1), refund received; Lumiares confirmation LUM-2",
    "* 🟡 (14:16) Assistant: Lumiares is in Bairro Alto",
])


def test_reflector_levels_shrink_and_keep_what_the_user_stated():
    counter = get_counter("tokenx")
    sizes = [counter.count_observations(compress(LOG, level)) for level in range(5)]
    assert sizes == sorted(sizes, reverse=True) and sizes[4] < sizes[0] * 0.8, sizes
    level0 = compress(LOG, 0)
    assert level0.count("Date: Nov 26, 2026") == 1 and "message boundary" not in level0
    for level in range(1, 5):
        text = compress(LOG, level)
        assert "booked Memmo" not in text and "rooftop" not in text  # superseded by the switch
        assert "switched hotel from Memmo to Lumiares" in text and "LUM-2" in text and "MPR-1" in text
        assert "allergic to peanuts" in text and "Prado" in text and "May 14" in text
        assert "Reasoning" not in text


def test_reflector_keeps_a_fact_that_only_less_lasting_or_scattered_clauses_repeat():
    """Level 4 drops a clause another clause repeats, but not for words spread over several clauses,
    nor for a 🟡 note (which the next reflection drops): either way the allergy would be lost."""
    scattered = "\n".join([
        "Date: Nov 26, 2026",
        "* 🔴 (10:10) User: Tomás is allergic to shellfish; Sintra on May 15",
        "* ✅ (10:15) User booked Prado for 8pm on May 14, mentioned the allergy",
        "* 🔴 (19:30) User: Tomás is happy with anything as long as there's no shellfish",
    ])
    assert "allergic to shellfish" in compress(scattered, 4)
    repeated_by_the_assistant = "\n".join([
        "Date: Nov 27, 2026",
        "* 🔴 (10:10) User: Tomás is allergic to shellfish; Sintra on May 15",
        "* 🟡 (10:11) Assistant: mention Tomás's shellfish allergy when booking",
    ])
    assert "allergic to shellfish" in compress(repeated_by_the_assistant, 4)


def test_every_relative_date_rule_starts_with_a_letter_the_scan_looks_for():
    """The combined scan skips every place whose next character is not in ``_FIRSTS``: a rule
    starting otherwise would never be found."""
    import re._parser as sre  # the pattern's own parse: each alternative's first character

    from streams.llm.deterministic.relative_dates import _FIRSTS, _RULES

    def firsts(items) -> set[str]:
        for op, av in items:
            if op is sre.AT:  # \b takes no character
                continue
            if op is sre.SUBPATTERN:
                return firsts(av[3])
            if op is sre.BRANCH:
                return set().union(*(firsts(branch) for branch in av[1]))
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
                return firsts(av[2])
            if op is sre.LITERAL:
                return {chr(av).lower()}
            if op is sre.IN and av == [(sre.CATEGORY, sre.CATEGORY_DIGIT)]:
                return {"\\d"}
            return {f"unexpected {op}"}
        return set()

    starts = set().union(*(firsts(sre.parse(pattern.pattern)) for pattern, _ in _RULES))
    assert starts <= set(_FIRSTS.replace("\\d", "")) | {"\\d"}, starts
    assert starts == set(_FIRSTS.replace("\\d", "")) | {"\\d"}  # and none more than needed
