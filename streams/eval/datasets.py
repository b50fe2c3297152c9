"""Conversation QA data for ``om eval``: the LoCoMo and LongMemEval formats, read into one shape.

* LoCoMo (a list of samples): ``conversation`` holds ``speaker_a``/``speaker_b`` and numbered
  ``session_N`` turn lists with ``session_N_date_time`` ("1:56 pm on 8 May, 2023"); ``qa`` holds
  ``question``, ``answer`` (absent for adversarial ones: ``adversarial_answer``), ``evidence`` and an
  integer ``category``. Speaker A plays the user, speaker B the assistant; each turn keeps its
  speaker's name. Turns are a minute apart from the session's time. ``event_summary`` (or
  ``events_session_N`` beside the sessions) annotates each session with its speakers' events: the
  facts an Observer should keep (``om eval``'s Observer-fidelity score). A sample may also carry its
  sessions at the top level instead of under ``conversation`` (the per-sample files of LoCoMo's
  archive), and a file may hold one sample instead of a list.
* LongMemEval (a list of items, one question each): ``haystack_sessions`` (lists of ``role``/
  ``content`` turns) with ``haystack_dates`` ("2023/05/20 (Sat) 02:21"), ``question``, ``answer``,
  ``question_type``, ``question_date``; ``haystack_session_ids`` with ``answer_session_ids`` name the
  sessions that hold the answer.

Sessions are numbered from 1 in the data's order; a question's ``evidence`` is the sessions it rests
on (LoCoMo's ``D3:5`` is session 3), so ``sessions(conversation, n)`` can keep the first n sessions
with exactly the questions and facts they can answer.

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
    session: int = 1


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    category: str
    asked_at: int | None = None
    evidence: tuple[int, ...] = ()  # the sessions the answer rests on; () when the data does not say


@dataclass(frozen=True)
class Fact:
    """An annotated event of one session, e.g. "Caroline attends an LGBTQ support group"."""

    session: int
    text: str


@dataclass
class Conversation:
    id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    speakers: tuple[str, ...] = ()  # the names the turns carry, if the data gives them


def load(path: Path) -> list[Conversation]:
    data = orjson.loads(path.read_bytes())
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ValueError(f"{path}: expected a non-empty JSON list of LoCoMo samples or LongMemEval items")
    if "conversation" in data[0] or "session_1" in data[0]:
        return [_locomo(sample, i) for i, sample in enumerate(data)]
    if "haystack_sessions" in data[0]:
        return [_longmemeval(item) for item in data]
    raise ValueError(f"{path}: neither LoCoMo ('conversation', 'qa') nor LongMemEval ('haystack_sessions')")


def sessions(conversation: Conversation, first: int) -> Conversation:
    """The first ``first`` sessions, the questions whose evidence lies in them (a question whose
    evidence the data does not give is left out: it may rest on a later session) and their facts."""
    return Conversation(
        conversation.id, [t for t in conversation.turns if t.session <= first],
        [q for q in conversation.questions if q.evidence and max(q.evidence) <= first],
        [f for f in conversation.facts if f.session <= first], conversation.speakers)


def _locomo(sample: dict, index: int) -> Conversation:
    conv = sample.get("conversation", sample)
    user = conv.get("speaker_a")
    conversation = Conversation(str(sample.get("sample_id", f"conv-{index}")),
                                speakers=tuple(str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)))
    numbers = sorted(int(m[1]) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    for n in numbers:
        start = _locomo_time(conv.get(f"session_{n}_date_time", ""))
        for j, turn in enumerate(conv[f"session_{n}"]):
            role = "user" if turn.get("speaker") == user else "assistant"
            text = f"{turn.get('speaker', role)}: {turn.get('text', '')}".strip()
            conversation.turns.append(Turn(role, text, start + j * TURN_GAP_MS, n))
    for k, qa in enumerate(sample.get("qa", [])):
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        category = qa.get("category", "")
        evidence = tuple(sorted({int(m[1]) for e in qa.get("evidence") or []
                                 if (m := re.match(r"D(\d+):", str(e)))}))
        conversation.questions.append(Question(f"{conversation.id}-q{k}", qa["question"], str(answer),
                                               LOCOMO_CATEGORIES.get(category, str(category)), evidence=evidence))
    events = sample.get("event_summary") or sample
    for n in numbers:
        for speaker, said in (events.get(f"events_session_{n}") or {}).items():
            if speaker != "date" and isinstance(said, list):
                conversation.facts.extend(Fact(n, str(text)) for text in said if str(text).strip())
    return conversation


def _longmemeval(item: dict) -> Conversation:
    conversation = Conversation(str(item["question_id"]))
    for n, (session, date) in enumerate(zip(item["haystack_sessions"], item["haystack_dates"]), start=1):
        start = _longmemeval_time(date)
        for j, turn in enumerate(session):
            conversation.turns.append(Turn(turn["role"], turn["content"], start + j * TURN_GAP_MS, n))
    conversation.turns.sort(key=lambda t: t.at)
    asked = _longmemeval_time(item["question_date"]) if item.get("question_date") else None
    ids = item.get("haystack_session_ids") or []
    answers = set(item.get("answer_session_ids") or [])
    evidence = tuple(n for n, session_id in enumerate(ids, start=1) if session_id in answers)
    conversation.questions.append(Question(conversation.id, item["question"], str(item["answer"]),
                                           str(item.get("question_type", "")), asked, evidence))
    return conversation


def _locomo_time(text: str) -> int:
    return _epoch_ms(datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y"))


def _longmemeval_time(text: str) -> int:
    return _epoch_ms(datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M"))


def _epoch_ms(moment: datetime) -> int:
    return int(moment.replace(tzinfo=timezone.utc).timestamp() * 1000)
