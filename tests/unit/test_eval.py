"""``om eval`` on the bundled synthetic set with the deterministic model: the plumbing and the
scoring (the deterministic model's scores are no quality claim), resume, --limit, --sessions; the two
formats; the Observer-fidelity score."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from processors.tokens import get_counter
from streams.cli import app
from streams.eval import fidelity
from streams.eval.datasets import BUNDLED, load, sessions
from streams.eval.reader import recent
from streams.eval.score import exact, f1
from streams.settings import get_settings


@pytest.fixture(autouse=True)
def _deterministic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("OM_MODEL", "om-deterministic/observer")
    monkeypatch.setenv("OM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("OM_CONFIG_FILE", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, ["eval", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_bundled_set_runs_end_to_end_and_resumes_without_asking_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    shown = _run("--out", str(out), "--judge-model", "om-deterministic/judge")
    report = orjson.loads((out / "report.json").read_bytes())
    assert report["conversations"] == 3 and report["questions"] == 27
    for name in ("om", "full", "recent"):
        condition = report["conditions"][name]
        assert condition["n"] == 27 and 0 < condition["f1"] <= 1 and condition["judge"] is not None
        assert set(condition["by_category"]) == {"knowledge-update", "multi-hop", "single-hop", "temporal"}
    full, om = report["conditions"]["full"], report["conditions"]["om"]
    assert full["judge"] > 0.2 and om["judge"] > 0.2  # the extractive reader finds facts in both
    assert om["context_tokens_per_query"] > 0 and report["memory"]["compression_ratio"] > 0
    assert report["memory"]["observer"]["calls"] > 0 and report["memory"]["reflector"]["calls"] > 0
    assert report["memory"]["observer"]["cost_usd"] is None and report["memory"]["failed_cycles"] == 0
    assert (out / "report.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "| om |" in shown and "| om |" in (out / "report.md").read_text()
    kept = report["observer_fidelity"]
    assert kept["facts"] == 33 and 0.5 < kept["kept"] <= 1 and 0 < kept["judge"] <= 1
    assert "Observer fidelity: of 33 annotated facts" in shown
    facts = [orjson.loads(line) for line in (out / "facts.jsonl").read_bytes().splitlines()]
    assert len(facts) == 33 and all(f["kept"] == (f["recall"] >= fidelity.KEPT_AT) for f in facts)

    answers, checked = (out / "answers.jsonl").read_bytes(), (out / "facts.jsonl").read_bytes()
    replays = {p.name: p.stat().st_mtime_ns for p in (out / "replays").iterdir()}
    _run("--out", str(out), "--judge-model", "om-deterministic/judge")
    assert (out / "answers.jsonl").read_bytes() == answers  # nothing asked twice
    assert (out / "facts.jsonl").read_bytes() == checked
    assert {p.name: p.stat().st_mtime_ns for p in (out / "replays").iterdir()} == replays
    assert orjson.loads((out / "report.json").read_bytes()) == report


def test_limit_takes_the_first_conversations(tmp_path: Path) -> None:
    _run("--out", str(tmp_path / "one"), "--limit", "1")
    report = orjson.loads((tmp_path / "one" / "report.json").read_bytes())
    assert report["conversations"] == 1 and report["questions"] == 10 and report["judge_model"] is None


def test_sessions_keep_the_first_sessions_with_the_questions_and_facts_they_answer(tmp_path: Path) -> None:
    _run("--out", str(tmp_path / "two"), "--sessions", "2")
    report = orjson.loads((tmp_path / "two" / "report.json").read_bytes())
    whole = load(BUNDLED)
    cut = [sessions(c, 2) for c in whole]
    assert report["questions"] == sum(len(c.questions) for c in cut) == 12
    assert report["observer_fidelity"]["facts"] == sum(len(c.facts) for c in cut) == 18
    assert all(t.session <= 2 for c in cut for t in c.turns) and len(cut[0].turns) == 20
    assert all(q.evidence and max(q.evidence) <= 2 for c in cut for q in c.questions)
    assert report["memory"]["history_tokens"] < sum(
        get_counter().count_string(t.text) for c in whole for t in c.turns)


def test_fidelity_finds_a_fact_by_its_words_whoever_the_notes_name() -> None:
    log = set(fidelity.stems("* 🔴 (09:10) User moved to Bristol and works as a midwife at Southmead"))
    assert fidelity.recall("Maya moves to Bristol.", log, ["Maya", "Assistant"]) == 1.0
    assert fidelity.recall("Maya starts work at Southmead Hospital as a midwife.", log, ["Maya"]) == 0.6
    assert fidelity.recall("Maya's sister Priya moves in November.", log, ["Maya"]) < fidelity.KEPT_AT
    assert fidelity.judged_kept(" kept.") and not fidelity.judged_kept("MISSING")


def test_scores_normalise_case_punctuation_and_articles() -> None:
    assert exact("The Bristol.", "bristol") == 1.0 and exact("Bristol, UK", "Bristol") == 0.0
    assert f1("Bristol, UK", "Bristol") == pytest.approx(2 / 3) and f1("Leeds", "Bristol") == 0.0


def test_recent_messages_fit_the_budget_newest_first_kept_in_order() -> None:
    counter = get_counter()
    messages = [{"role": "user", "content": f"message number {i} about the trip"} for i in range(10)]
    kept = recent(messages, 3 * counter.count_string(messages[0]["content"]), counter)
    assert [m["content"] for m in kept] == [m["content"] for m in messages[-3:]]


def test_locomo_and_longmemeval_formats_load_into_one_shape(tmp_path: Path) -> None:
    maya = load(BUNDLED)[0]
    assert maya.turns[0].role == "user" and maya.turns[0].text.startswith("Maya: ")
    assert maya.turns[1].at - maya.turns[0].at == 60_000 and maya.questions[0].category == "knowledge-update"
    locomo = [{"sample_id": "s", "conversation": {"speaker_a": "A", "speaker_b": "B",
                                                   "session_1_date_time": "1:56 pm on 8 May, 2023",
                                                   "session_1": [{"speaker": "B", "dia_id": "D1:1", "text": "hi"}]},
               "qa": [{"question": "q?", "adversarial_answer": "no", "category": 5, "evidence": []}]}]
    (tmp_path / "locomo.json").write_bytes(orjson.dumps(locomo))
    [sample] = load(tmp_path / "locomo.json")
    assert sample.turns[0].role == "assistant" and sample.turns[0].at == 1683554160000
    assert (sample.questions[0].answer, sample.questions[0].category) == ("no", "adversarial")
    assert sample.speakers == ("A", "B") and sample.facts == [] and sample.questions[0].evidence == ()
    # one sample with its sessions at the top level and its events beside them (LoCoMo's archive files)
    alone = {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
             "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I adopted a cat"}],
             "session_2_date_time": "2:00 pm on 9 May, 2023",
             "session_2": [{"speaker": "A", "dia_id": "D2:1", "text": "The cat is called Io"}],
             "events_session_2": {"A": ["A names the cat Io."], "B": [], "date": "9 May, 2023"},
             "qa": [{"question": "Cat's name?", "answer": "Io", "category": 4, "evidence": ["D2:1", "D1:1"]}]}
    (tmp_path / "alone.json").write_bytes(orjson.dumps(alone))
    [one] = load(tmp_path / "alone.json")
    assert [t.session for t in one.turns] == [1, 2] and one.questions[0].evidence == (1, 2)
    assert [(f.session, f.text) for f in one.facts] == [(2, "A names the cat Io.")]
    assert sessions(one, 1).questions == [] and sessions(one, 1).facts == []
    longmem = [{"question_id": "lm1", "question_type": "knowledge-update", "question": "Where?", "answer": "Oslo",
                "question_date": "2023/06/01 (Thu) 10:00", "haystack_dates": ["2023/05/20 (Sat) 02:21"],
                "haystack_session_ids": ["s9"], "answer_session_ids": ["s9"],
                "haystack_sessions": [[{"role": "user", "content": "I moved to Oslo"},
                                       {"role": "assistant", "content": "Nice"}]]}]
    (tmp_path / "lme.json").write_bytes(orjson.dumps(longmem))
    [item] = load(tmp_path / "lme.json")
    assert [t.text for t in item.turns] == ["I moved to Oslo", "Nice"] and item.questions[0].asked_at == 1685613600000
    assert item.questions[0].evidence == (1,)
