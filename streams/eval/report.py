"""The figures of one ``om eval`` run: per condition, accuracy by category, context tokens and reader
latency; for the memory, Observer/Reflector tokens and cost, the compression ratio and, where the
data annotates facts, the Observer's fidelity (the share of them the log kept). As JSON, a Markdown
table and a PNG bar chart (F1 by category, one bar per condition)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

from streams.eval.png import bar_chart
from streams.eval.reader import CONDITIONS


def summarise(rows: list[dict[str, Any]], replays: list[dict[str, Any]], facts: list[dict[str, Any]],
              meta: dict[str, Any]) -> dict[str, Any]:
    conditions: dict[str, Any] = {}
    for condition in CONDITIONS:
        mine = [r for r in rows if r["condition"] == condition]
        by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in mine:
            by_category[row["category"]].append(row)
        conditions[condition] = {
            **_scores(mine),
            "by_category": {c: _scores(rs) for c, rs in sorted(by_category.items())},
            "context_tokens_per_query": _mean([r["context_tokens"] for r in mine]),
            "reader_latency_ms": _mean([r["latency_ms"] for r in mine]),
        }
    history = sum(r["message_tokens"] for r in replays)
    om_context = sum(r["context_tokens"] for r in replays)
    kept = sum(r["memory_tokens"] for r in replays)
    memory = {
        role: {
            "input_tokens": sum(r[role]["input_tokens"] for r in replays),
            "output_tokens": sum(r[role]["output_tokens"] for r in replays),
            "calls": sum(r[role]["calls"] for r in replays),
        } for role in ("observer", "reflector")
    }
    for role, model in (("observer", meta["observer_model"]), ("reflector", meta["reflector_model"])):
        memory[role]["cost_usd"] = cost_usd(model, memory[role]["input_tokens"], memory[role]["output_tokens"])
    memory.update(history_tokens=history, om_context_tokens=om_context, memory_tokens=kept,
                  compression_ratio=round(history / kept, 2) if kept else None,
                  failed_cycles=sum(r["failed_cycles"] for r in replays))
    return {**meta, "conversations": len(replays), "questions": len({r["question_id"] for r in rows}),
            "conditions": conditions, "memory": memory, "observer_fidelity": _fidelity(facts)}


def _fidelity(facts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """None when the data annotates no facts."""
    if not facts:
        return None
    judged = [f["judge"] for f in facts if f.get("judge") is not None]
    return {"facts": len(facts), "kept": _mean([float(f["kept"]) for f in facts]),
            "recall": _mean([f["recall"] for f in facts]),
            "judge": _mean([float(j) for j in judged]) if judged else None}


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """From litellm's offline cost map (LITELLM_LOCAL_MODEL_COST_MAP); None for a model it does not price."""
    import streams.llm.client  # noqa: F401 - sets the offline cost map before litellm is imported
    from streams.llm.models import to_litellm_model

    import litellm

    try:
        prompt, completion = litellm.cost_per_token(model=to_litellm_model(model), prompt_tokens=input_tokens,
                                                     completion_tokens=output_tokens)
    except Exception:  # not in the map: a local or custom model
        return None
    return round(prompt + completion, 6)


def markdown(summary: dict[str, Any]) -> str:
    categories = sorted({c for cond in summary["conditions"].values() for c in cond["by_category"]})
    judged = any(cond["judge"] is not None for cond in summary["conditions"].values())
    lines = [f"# om eval: {summary['dataset']}", "",
             f"Memory model: `{summary['observer_model']}` / `{summary['reflector_model']}`; reader "
             f"`{summary['reader_model']}`" + (f"; judge `{summary['judge_model']}`" if judged else "") +
             f"; {summary['conversations']} conversation(s), {summary['questions']} question(s).", "",
             "| condition | " + " | ".join(f"{c} F1" for c in categories) + " | F1 | exact |"
             + (" judge |" if judged else "") + " context tokens/query | reader ms |",
             "|---" * (len(categories) + 5 + judged) + "|"]
    for name, cond in summary["conditions"].items():
        cells = [_pct(cond["by_category"].get(c, {}).get("f1")) for c in categories]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {_pct(cond['f1'])} | {_pct(cond['exact'])} |"
                     + (f" {_pct(cond['judge'])} |" if judged else "")
                     + f" {_num(cond['context_tokens_per_query'])} | {_num(cond['reader_latency_ms'])} |")
    memory = summary["memory"]
    lines += ["", "| memory | input tokens | output tokens | calls | cost (USD) |", "|---|---|---|---|---|"]
    for role in ("observer", "reflector"):
        m = memory[role]
        cost = "n/a" if m["cost_usd"] is None else f"{m['cost_usd']:.4f}"
        lines.append(f"| {role} | {m['input_tokens']} | {m['output_tokens']} | {m['calls']} | {cost} |")
    lines += ["", f"History {memory['history_tokens']} tokens → memory (observations + unobserved messages) "
              f"{memory['memory_tokens']} tokens: compression {memory['compression_ratio']}×; the OM context adds "
              f"its fixed instructions ({memory['om_context_tokens']} tokens in all); failed cycles: "
              f"{memory['failed_cycles']}.", "",
              *_fidelity_lines(summary.get("observer_fidelity")),
              "Plot (`report.png`): F1 by category, one bar per condition.", ""]
    return "\n".join(lines)


def _fidelity_lines(found: dict[str, Any] | None) -> list[str]:
    if not found:
        return []
    judged = "" if found["judge"] is None else f"; the judge finds {_pct(found['judge'])} % of them kept"
    return [f"Observer fidelity: of {found['facts']} annotated facts, {_pct(found['kept'])} % are in the final "
            f"observation log by their words (at least half of each fact's content words; mean share "
            f"{_pct(found['recall'])} %){judged}.", ""]


def plot(summary: dict[str, Any], path: Path) -> None:
    categories = sorted({c for cond in summary["conditions"].values() for c in cond["by_category"]})
    bar_chart(path, [[cond["by_category"].get(c, {}).get("f1") or 0.0 for cond in summary["conditions"].values()]
                     for c in categories],
              labels=categories, series=list(summary["conditions"]),
              title=f"F1 by question category: {summary['dataset']} (reader {summary['reader_model']})")


def _scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [r["judge"] for r in rows if r.get("judge") is not None]
    return {"n": len(rows), "exact": _mean([r["exact"] for r in rows]), "f1": _mean([r["f1"] for r in rows]),
            "judge": _mean([float(j) for j in judged]) if judged else None}


def _mean(values: list[float]) -> float | None:
    return round(mean(values), 4) if values else None


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"
