"""The offline Observer's sentence tools (``streams/llm/deterministic/clauses.py``): the third-person
rewrite and the specifics, on the cases their fast paths must not change."""

from __future__ import annotations

import re

import pytest

from streams.llm.deterministic.clauses import _may_have_capitals, specifics, third_person


@pytest.mark.parametrize("sentence, role, expected", [
    # each inner rule, and where several start at one place the first rule wins (I'm before I, we're before we)
    ("Booked it: I'm sure I am done, I've paid, I'll go, I'd say I did", "user",
     ("booked it: they're sure they are done, they've paid, they'll go, they'd say they did", True)),
    ("Tell me my mine is ours, We're and we'll go with Our us", "user",
     ("Tell them their theirs is ours, they're and they'll go with their them", False)),
    ("I'mI and museum, mineral, usa, I-am, we-us, 'me'", "user",
     ("'mI and museum, mineral, usa, they-am, they-them, 'them'", True)),
    ("I'm moving to Lisbon with my partner", "user", ("is moving to Lisbon with their partner", True)),
    ("You're right: you and your Yours, you're", "assistant",  # "you're" is a rule of its own, "You're" is not
     ("user're right: user and user's Yours, user is", False)),
    ("I can book it for you", "assistant", ("can book it for user", True)),
])
def test_third_person(sentence, role, expected):
    assert third_person(sentence, role) == expected


def test_specifics_without_capitals_are_the_numbers():
    assert specifics("moved 3 flights to 10:30, not lisbon abc-12") == frozenset({"3", "10:30", "12"})
    assert specifics("Moved the Lisbon flight ABC-12 to 10:30 with Ana") == frozenset(
        {"Lisbon", "ABC-12", "10:30", "Ana", "12"})


def test_the_capitals_guard_misses_no_letter_a_name_or_a_code_starts_with():
    starts = re.compile("[A-ZÀ-Ý]")
    assert [hex(c) for c in range(0x250) if starts.match(chr(c)) and not _may_have_capitals(chr(c))] == []
