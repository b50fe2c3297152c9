"""Write a compact fixture of one recorded Mastra run (``python -m tests.fidelity.extract_trace <dir> <name>``).

The recordings live outside the repository (``../shared/reference/mastra-traces/``: real
``@mastra/memory`` 1.31.0 under a virtual clock with a deterministic mock model; see their README).
This keeps what the fidelity test needs — the messages as stored (ids, times, texts), every model
answer in call order, and per turn what Mastra computed — in ``fixtures/<name>.json.gz``.
"""

from __future__ import annotations

import gzip
import json
import sys
from datetime import datetime
from pathlib import Path


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _observer_calls(turn: dict) -> list[list]:
    return [[h["trigger"], h["messages"], h["messageTokens"]] for h in turn["hooks"]
            if h["hook"] == "beforeObservation"]


def _reflections(turn: dict) -> list[list]:
    """Each Reflector cycle started: background (its slice's tokens) or synchronous (the log's)."""
    found = []
    for part in turn["streamOmParts"]:
        data = part["data"]
        if data.get("operationType") != "reflection":
            continue
        if part["type"] == "data-om-buffering-start":
            found.append(["background", data["tokensToBuffer"]])
        elif part["type"] == "data-om-observation-start":
            found.append(["sync", data["tokensToObserve"]])
    return found


def _activations(turn: dict) -> list[list]:
    return [[p["data"]["operationType"], p["data"]["tokensActivated"], p["data"]["observationTokens"],
             p["data"]["messagesActivated"], p["data"]["triggeredBy"]]
            for p in turn["streamOmParts"] if p["type"] == "data-om-activation"]


def extract(folder: Path, name: str) -> dict:
    record = [json.loads(line) for line in (folder / f"{name}.record.jsonl").read_text().splitlines()]
    inputs = [json.loads(line) for line in (folder / f"{name}.inputs.jsonl").read_text().splitlines()]
    scenario, turns = record[0], [t for t in record[1:] if t["kind"] == "turn" and "status" in t]
    stored: dict[str, dict] = {}
    for turn in turns:
        for thread in (turn.get("unobserved") or {}).values():
            for message in thread["messages"]:
                stored.setdefault(message["label"], message)
    user_text = {t["turn"]: t["userText"] for t in inputs if t["kind"] == "turn"}
    actor = {c["turn"]: c["output"] for c in inputs if c["kind"] == "model-call" and c["role"] == "actor"}
    out_turns = []
    for turn in turns:
        n = turn["turn"]
        messages = []
        for label, role, text in ((f"U{n}", "user", user_text[n]), (f"A{n}", "assistant", actor[n])):
            seen = stored[label]
            messages.append({"label": label, "id": seen["id"], "role": role, "created_at": _ms(seen["createdAt"]),
                             "text": text, "tokens": seen["tokens"]})
        rec = turn["record"]
        out_turns.append({
            "turn": n,
            "thread_id": turn["threadId"],
            "messages": messages,
            "expect": {
                "pending": turn["status"]["pendingTokens"],
                "persisted_pending": rec["pendingMessageTokens"],
                "generation": rec["generationCount"],
                "observation_tokens": rec["observationTokenCount"],
                "cursor": rec["lastObservedAt"],
                "chunks": [[c["messages"], c["messageTokens"], c["tokenCount"]] for c in turn["bufferedChunks"]],
                "observer_calls": _observer_calls(turn),
                "activations": _activations(turn),
                "reflections": _reflections(turn),
                "active_observations": rec["activeObservations"],
            },
        })
    calls = [{"turn": c["turn"], "role": c["role"], "output": c["output"]}
             for c in inputs if c["kind"] == "model-call" and c["role"] != "actor"]
    return {"source": f"shared/reference/mastra-traces/{name} (@mastra/memory 1.31.0)",
            "scenario": name, "om_options": scenario["omOptions"], "resolved": scenario["resolved"],
            "resource_id": turns[0]["resourceId"], "turns": out_turns, "model_calls": calls}


if __name__ == "__main__":
    folder, name = Path(sys.argv[1]), sys.argv[2]
    target = Path(__file__).parent / "fixtures" / f"{name}.json.gz"
    target.write_bytes(gzip.compress(json.dumps(extract(folder, name), ensure_ascii=False).encode(), mtime=0))
    print(target, target.stat().st_size)
