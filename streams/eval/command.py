"""``om eval [DATASET]``: replay, ask, score, report — resumable, with progress bars.

Everything a run produces goes to ``--out`` (default ``<data dir>/eval/<dataset name>``): one
``replays/<conversation>.json`` per replayed conversation, one ``answers.jsonl`` line per
(question, condition) and, where the data annotates facts, one ``facts.jsonl`` line per fact
(``streams/eval/fidelity.py``); a second run skips what is there (``--fresh`` starts over). The
report is rebuilt from those files each time: ``report.json``, ``report.md``, ``report.png``.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, Optional

import orjson
import typer
from rich.console import Console
from rich.progress import Progress

from processors.machine import counter_for
from processors.model_port import ModelCall, ModelCallError
from streams.eval import fidelity
from streams.eval.datasets import BUNDLED, Conversation, load, sessions
from streams.eval.reader import CONDITIONS, ask, history, recent
from streams.eval.replay import replay
from streams.eval.report import markdown, plot, summarise
from streams.eval.score import exact, f1, judge_prompt, judged_correct
from streams.om_config import load_config
from streams.settings import get_settings

DETERMINISTIC = "om-deterministic/"


def eval_command(
    dataset: Optional[Path] = typer.Argument(None, help="LoCoMo or LongMemEval JSON file; default: the bundled "
                                             "synthetic set (streams/eval/data/synthetic.json)"),
    out: Optional[Path] = typer.Option(None, "--out", help="results folder; a second run resumes in it"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="only the first N conversations"),
    first_sessions: Optional[int] = typer.Option(None, "--sessions", min=1, help="only the first N sessions of "
                                                 "each conversation, with the questions whose evidence lies in "
                                                 "them (a quick look, or a model with a short context)"),
    reader_model: str = typer.Option("", "--reader-model", help="answers the questions; default OM_MODEL "
                                     "(om-deterministic/reader with the deterministic model)"),
    judge_model: str = typer.Option("", "--judge-model", help="also grade answers with this model (LLM judge)"),
    message_tokens: int = typer.Option(200, "--message-tokens", min=1, help="observation threshold for the "
                                       "replay (small, so a short conversation is observed; give your own)"),
    observation_tokens: int = typer.Option(1000, "--observation-tokens", min=1, help="reflection threshold"),
    fresh: bool = typer.Option(False, "--fresh", help="ignore earlier results in --out"),
) -> None:
    """Measure memory quality: OM context vs full history vs recent messages at the same budget."""
    from streams.llm.client import LiteLLMClient
    from streams.simulate_cli import close_loop, model_responder

    settings = get_settings()
    path = dataset or BUNDLED
    config = load_config(settings, {"observation": {"messageTokens": message_tokens},
                                    "reflection": {"observationTokens": observation_tokens}})
    reader = reader_model or (f"{DETERMINISTIC}reader" if settings.model.startswith(DETERMINISTIC) else settings.model)
    folder = out or settings.data_dir / "eval" / _safe(path.stem)
    (folder / "replays").mkdir(parents=True, exist_ok=True)
    answers_file, facts_file = folder / "answers.jsonl", folder / "facts.jsonl"
    if fresh:
        answers_file.unlink(missing_ok=True)
        facts_file.unlink(missing_ok=True)
        for old in (folder / "replays").glob("*.json"):
            old.unlink()
    conversations = load(path)[:limit]
    if first_sessions:
        conversations = [sessions(c, first_sessions) for c in conversations]
    counter = counter_for(config)
    llm = LiteLLMClient.from_settings(settings, config)
    done = {(r["question_id"], r["condition"]): r for r in _rows(answers_file)}
    checked = {(r["conversation"], r["index"]): r for r in _rows(facts_file)}
    replays: list[dict[str, Any]] = []
    loop = asyncio.new_event_loop()
    try:
        with Progress(console=Console(stderr=True)) as progress, model_responder(config, llm, loop) as respond:
            replaying = progress.add_task("replaying", total=len(conversations))
            feeding = progress.add_task("messages", total=sum(len(c.turns) for c in conversations))
            questions = sum(len(c.questions) for c in conversations) * len(CONDITIONS)
            asking = progress.add_task("answering", total=questions)
            progress.advance(asking, sum(1 for c in conversations for q in c.questions for name in CONDITIONS
                                         if (q.id, name) in done))
            for conversation in conversations:
                replays.append(_replayed(folder, conversation, config, respond, fresh,
                                         lambda: progress.advance(feeding)))
                progress.update(feeding, completed=sum(len(c.turns) for c in conversations[:len(replays)]))
                progress.advance(replaying)
                for row in _facts(conversation, replays[-1], checked, llm, judge_model, loop):
                    with facts_file.open("ab") as sink:
                        sink.write(orjson.dumps(row) + b"\n")
                    checked[(row["conversation"], row["index"])] = row
                for row in _answer(conversation, replays[-1], done, llm, reader, judge_model, counter, loop):
                    with answers_file.open("ab") as sink:
                        sink.write(orjson.dumps(row) + b"\n")
                    done[(row["question_id"], row["condition"])] = row
                    progress.advance(asking)
    finally:
        close_loop(loop)
    wanted = {q.id for c in conversations for q in c.questions}
    rows = [r for r in done.values() if r["question_id"] in wanted]
    kept = {c.id for c in conversations}
    facts = [r for r in checked.values() if r["conversation"] in kept]
    summary = summarise(rows, replays, facts, {
        "dataset": path.name, "observer_model": str(config.observer_model()),
        "reflector_model": str(config.reflector_model()), "reader_model": reader, "judge_model": judge_model or None})
    (folder / "report.json").write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    (folder / "report.md").write_text(markdown(summary))
    plot(summary, folder / "report.png")
    typer.echo(markdown(summary))
    typer.echo(f"results in {folder}")


def _replayed(folder: Path, conversation: Conversation, config: Any, respond: Any, fresh: bool,
              fed: Any) -> dict[str, Any]:
    stored = folder / "replays" / f"{_safe(conversation.id)}.json"
    if stored.exists() and not fresh:
        return orjson.loads(stored.read_bytes())
    result = replay(conversation, config, respond, fed).to_json()
    stored.write_bytes(orjson.dumps(result))
    return result


def _answer(conversation: Conversation, replayed: dict[str, Any], done: dict, llm: Any, reader: str, judge: str,
            counter: Any, loop: asyncio.AbstractEventLoop):
    full = history(conversation)
    contexts = {"om": replayed["context"], "full": full,
                "recent": recent(full, replayed["context_tokens"], counter)}
    for question in conversation.questions:
        for condition in CONDITIONS:
            if (question.id, condition) in done:
                continue
            row: dict[str, Any] = {"conversation": conversation.id, "question_id": question.id,
                                   "category": question.category, "condition": condition,
                                   "question": question.question, "gold": question.answer}
            try:
                answered = loop.run_until_complete(
                    ask(llm, reader, contexts[condition], question, replayed["now_ms"], counter))
                row.update(answer=answered.text, context_tokens=answered.context_tokens,
                           latency_ms=answered.latency_ms, reader_input_tokens=answered.input_tokens,
                           reader_output_tokens=answered.output_tokens, error=None)
            except ModelCallError as exc:
                row.update(answer="", context_tokens=0, latency_ms=0, reader_input_tokens=0,
                           reader_output_tokens=0, error=str(exc))
            row.update(exact=exact(row["answer"], question.answer), f1=f1(row["answer"], question.answer),
                       judge=_judge(llm, judge, question.question, question.answer, row["answer"], loop))
            yield row


def _facts(conversation: Conversation, replayed: dict[str, Any], checked: dict, llm: Any, judge: str,
           loop: asyncio.AbstractEventLoop):
    """One row per annotated fact: is it in the final observation log (lexically; by the judge)?"""
    observations = replayed["observations"]
    log = set(fidelity.stems(observations))
    for index, fact in enumerate(conversation.facts):
        if (conversation.id, index) in checked:
            continue
        share = fidelity.recall(fact.text, log, conversation.speakers)
        verdict = _ask_judge(llm, judge, fidelity.judge_prompt(observations, fact.text), loop)
        yield {"conversation": conversation.id, "index": index, "session": fact.session, "fact": fact.text,
               "recall": round(share, 4), "kept": share >= fidelity.KEPT_AT,
               "judge": None if verdict is None else fidelity.judged_kept(verdict)}


def _judge(llm: Any, model: str, question: str, gold: str, answer: str, loop: asyncio.AbstractEventLoop) -> bool | None:
    verdict = _ask_judge(llm, model, judge_prompt(question, gold, answer), loop)
    return None if verdict is None else judged_correct(verdict)


def _ask_judge(llm: Any, model: str, messages: list[dict[str, str]], loop: asyncio.AbstractEventLoop) -> str | None:
    if not model:
        return None
    try:
        reply = loop.run_until_complete(llm.complete(ModelCall(role="judge", model=model, messages=messages,
                                                               max_output_tokens=10)))
    except ModelCallError:
        return None
    return reply.text


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
