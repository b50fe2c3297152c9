"""What `om demo` measures in the agent's context: tokens before and after, and facts still known.

Rules kept here:

* Raw tokens count every message of the conversation; context tokens count every message the
  agent would send, fixed instructions included. The ratio is the conversation against that whole
  context — what the agent really gets instead of the raw history.
* The fixed instruction texts around the observations (the preamble, the ``<observations>`` opener,
  the continuation reminder) are the same for any conversation, so they are also shown on their own
  line, with a second, labelled ratio of the conversation against what is left of it: observations,
  hints and the messages not yet observed.
* A fact counts as known when its pattern occurs anywhere in the context (observations or the
  recent messages); the patterns accept several phrasings so a real model can pass them too.
  Dates are those of the bundled conversation, which always ends yesterday.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from processors.context import CONTINUATION_HINT, OBSERVATIONS_OPEN, OBSERVATIONS_PREAMBLE
from processors.tokens import get_counter
from schemas.messages import ChatMessage

FIXED_TEXTS = frozenset({OBSERVATIONS_PREAMBLE, OBSERVATIONS_OPEN, f"<system-reminder>{CONTINUATION_HINT}</system-reminder>"})


@dataclass(frozen=True)
class Fact:
    label: str
    pattern: str

    def known(self, context: str) -> bool:
        return re.search(self.pattern, context, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Measure:
    raw: int
    context: int
    fixed: int

    @property
    def memory(self) -> int:
        return self.context - self.fixed

    @property
    def ratio(self) -> float:
        """The raw conversation against the whole context the agent receives."""
        return self.raw / max(self.context, 1)

    @property
    def memory_ratio(self) -> float:
        """The raw conversation against the context without its fixed instructions."""
        return self.raw / max(self.memory, 1)


def facts(last_day: date) -> list[Fact]:
    """A handful of facts from ``sample_conversation.jsonl``; ``last_day``: the day of its last message."""
    said_tomorrow = last_day + timedelta(days=1)
    return [
        Fact("hotel switched from Memmo to Lumiares",
             r"(?:switch|chang|mov)\w*[^\n;]{0,40}from Memmo to Lumiares|Lumiares[^\n;]{0,40}instead of Memmo"),
        Fact("Lumiares booking number LUM-4471", r"LUM-4471"),
        Fact("Memmo booking MPR-88213 cancelled", r"cancel\w*[^\n;]{0,30}MPR-88213|MPR-88213[^\n;]{0,40}cancel"),
        Fact("Tomás is allergic to shellfish", r"Tomás[^\n;]{0,20}allergic to shellfish|shellfish allergy"),
        Fact("trip dates May 12 to May 17", r"May 12\b[^\n;]{0,20}(?:May )?17\b"),
        Fact("dinner at Prado, 8pm on May 14", r"Prado[^\n;]{0,30}(?:8 ?pm|20:00)[^\n;]{0,10}May 14"),
        Fact(f"'tomorrow' said on the last day resolved to {said_tomorrow:%b} {said_tomorrow.day}",
             rf"(?:meaning|on) {said_tomorrow:%b} {said_tomorrow.day}, {said_tomorrow.year}"),
    ]


def measure(messages: list[ChatMessage], chat: list[dict[str, Any]]) -> Measure:
    counter = get_counter("tokenx")
    fixed = sum(counter.count_string(m["content"]) for m in chat if m["content"] in FIXED_TEXTS)
    return Measure(raw=counter.count_messages(messages),
                   context=sum(counter.count_string(m["content"]) for m in chat), fixed=fixed)


def context_text(chat: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] for m in chat if m["content"] not in FIXED_TEXTS)
