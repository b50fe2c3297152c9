"""Observer fidelity: the share of a conversation's annotated facts that its observation log kept.

Where the data annotates each session with its events (LoCoMo's ``event_summary``), every fact is
looked up in the final observation log two ways:

* **lexical** (always): the fact's content words — lower case, stop words and the speakers' own
  names left out (the Observer may write "User" where the fact names the speaker), each cut to a
  crude stem — and the share of them found among the log's stems. A fact counts as kept when at
  least ``KEPT_AT`` of its words are there. It cannot see a paraphrase ("bought" for "purchased"),
  so it under-counts a model that rewords, and it is what needs no model;
* **judge** (with ``--judge-model``): the judge reads the log and the fact and says whether the log
  records it (``KEPT``/``MISSING``).

A fact the Reflector merged away is missing: the score is of what the agent still has.
"""

from __future__ import annotations

import re
from typing import Iterable

from streams.eval.score import normalise

KEPT_AT = 0.5
_STOP = frozenset("""
a an and are as at be been but by did do does for from had has have he her hers him his i in is it its
me my of on or our she so that the their them they this to too was we were what when where which who
will with you your
""".split())
_SUFFIX = re.compile(r"(ing|ed|es|e|s)$")


def stems(text: str, leave_out: Iterable[str] = ()) -> list[str]:
    names = {w for name in leave_out for w in normalise(name)}
    return [_stem(w) for w in normalise(text) if w not in _STOP and w not in names]


def recall(fact: str, log_stems: set[str], leave_out: Iterable[str] = ()) -> float:
    """The share of the fact's content stems present in the log; 1.0 for a fact with none."""
    wanted = stems(fact, leave_out)
    if not wanted:
        return 1.0
    return sum(1 for w in wanted if w in log_stems) / len(wanted)


def judge_prompt(observations: str, fact: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You check an assistant's memory notes against one fact from the "
                                      "conversation they were written from. Reply KEPT when the notes record "
                                      "the fact (in any wording, dates resolved or not), MISSING when they do "
                                      "not or contradict it. One word."},
        {"role": "user", "content": f"Notes:\n{observations}\n\nFact: {fact}"},
    ]


def judged_kept(verdict: str) -> bool:
    return verdict.strip().upper().startswith("KEPT")


def _stem(word: str) -> str:
    return _SUFFIX.sub("", word) if len(word) > 4 else word
