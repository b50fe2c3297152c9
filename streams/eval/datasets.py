"""Conversation QA data for ``om eval``: the LoCoMo and LongMemEval formats, read into one shape.

* LoCoMo (a list of samples): ``conversation`` holds ``speaker_a``/``speaker_b`` and numbered
  ``session_N`` turn lists with ``session_N_date_time`` ("1:56 pm on 8 May, 2023"); ``qa`` holds
  ``question``, ``answer`` (absent for adversarial ones: ``adversarial_answer``), ``evidence`` and an
  integer ``category``. Speaker A plays the user, speaker B the assistant; each turn keeps its
  speaker's name. Turns are a minute apart from the session's time.
* LongMemEval (a list of items, one question each): ``haystack_sessions`` (lists of ``role``/
  ``content`` turns) with ``haystack_dates`` ("2023/05/20 (Sat) 02:21"), ``question``, ``answer``,
  ``question_type``, ``question_date``.

The format is told apart by the first item's keys. A category that is a string passes through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import orjson

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BUNDLED = Path(__file__).parent / "data" / "synthetic.json"
TURN_GAP_MS = 60_000


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "assistant"
    text: str
    at: int  # epoch ms


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    category: str
    asked_at: int | None = None


@dataclass
class Conversation:
    id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def load(path: Path) -> list[Conversation]:
    data = orjson.loads(path.read_bytes())
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a non-empty JSON list of LoCoMo samples or LongMemEval items")
    if "conversation" in data[0]:
        return [_locomo(sample, i) for i, sample in enumerate(data)]
    if "haystack_sessions" in data[0]:
        return [_longmemeval(item) for item in data]
    raise ValueError(f"{path}: neither LoCoMo ('conversation', 'qa') nor LongMemEval ('haystack_sessions')")


def _locomo(sample: dict, index: int) -> Conversation:
    conv = sample["conversation"]
    user = conv.get("speaker_a")
    conversation = Conversation(str(sample.get("sample_id", f"conv-{index}")))
    numbers = sorted(int(m[1]) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    for n in numbers:
        start = _locomo_time(conv.get(f"session_{n}_date_time", ""))
        for j, turn in enumerate(conv[f"session_{n}"]):
            role = "user" if turn.get("speaker") == user else "assistant"
            text = f"{turn.get('speaker', role)}: {turn.get('text', '')}".strip()
            conversation.turns.append(Turn(role, text, start + j * TURN_GAP_MS))
    for k, qa in enumerate(sample.get("qa", [])):
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        category = qa.get("category", "")
        conversation.questions.append(Question(f"{conversation.id}-q{k}", qa["question"], str(answer),
                                               LOCOMO_CATEGORIES.get(category, str(category))))
    return conversation


def _longmemeval(item: dict) -> Conversation:
    conversation = Conversation(str(item["question_id"]))
    for session, date in zip(item["haystack_sessions"], item["haystack_dates"]):
        start = _longmemeval_time(date)
        for j, turn in enumerate(session):
            conversation.turns.append(Turn(turn["role"], turn["content"], start + j * TURN_GAP_MS))
    conversation.turns.sort(key=lambda t: t.at)
    asked = _longmemeval_time(item["question_date"]) if item.get("question_date") else None
    conversation.questions.append(Question(conversation.id, item["question"], str(item["answer"]),
                                           str(item.get("question_type", "")), asked))
    return conversation


def _locomo_time(text: str) -> int:
    return _epoch_ms(datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y"))


def _longmemeval_time(text: str) -> int:
    return _epoch_ms(datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M"))


def _epoch_ms(moment: datetime) -> int:
    return int(moment.replace(tzinfo=timezone.utc).timestamp() * 1000)
