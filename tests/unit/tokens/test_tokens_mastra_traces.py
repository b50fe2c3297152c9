"""Every token count Mastra 1.31 recorded in the shared traces equals ours (spec §9.1).

The fixture (see fixtures/README.md) holds both recorded runs' messages with the counts Mastra's
OM computed: each text alone (tokenx 1.3.0), each message (``unobserved[].tokens``), each message
set it counted as a whole (pending totals, Observer inputs of ``beforeObservation``, buffered
chunks) and each buffered chunk's observation text.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from processors.tokens import get_counter
from schemas.messages import ChatMessage

FIXTURE_FILE = Path(__file__).parent / "fixtures" / "mastra_trace_counts.json.gz"
TRACES = json.loads(gzip.decompress(FIXTURE_FILE.read_bytes()))["traces"]


def _messages(trace: dict) -> dict[str, ChatMessage]:
    return {
        label: ChatMessage.model_validate({
            "id": label, "threadId": "t", "role": entry["role"], "createdAt": 1,
            "parts": [{"type": "text", "text": entry["text"]}],
        })
        for label, entry in trace["messages"].items()
    }


def test_fixture_holds_every_message_of_both_runs() -> None:
    assert {name: len(trace["messages"]) for name, trace in TRACES.items()} == {
        "a-defaults": 120, "c-small-thresholds": 160}  # 60 and 80 turns, a user message and a reply each
    assert all(trace["message_sets"] and trace["chunk_observations"] for trace in TRACES.values())


@pytest.mark.parametrize("name", sorted(TRACES))
def test_each_text_and_message_counts_as_mastra_counted_it(name: str) -> None:
    counter = get_counter("tokenx")
    trace = TRACES[name]
    messages = _messages(trace)
    wrong = {label: (entry["text_tokens"], entry["tokens"],
                     counter.count_string(entry["text"]), counter.count_message(messages[label]))
             for label, entry in trace["messages"].items()
             if (counter.count_string(entry["text"]), counter.count_message(messages[label]))
             != (entry["text_tokens"], entry["tokens"])}
    assert wrong == {}  # label: (Mastra's text, Mastra's message, our text, our message)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_each_message_set_counts_as_mastra_counted_it(name: str) -> None:
    counter = get_counter("tokenx")
    trace = TRACES[name]
    messages = _messages(trace)
    wrong = []
    for entry in trace["message_sets"]:
        ours = counter.count_messages([messages[label] for label in entry["messages"]])
        if ours != entry["tokens"]:
            wrong.append((entry["messages"], entry["tokens"], ours))
    assert wrong == []


@pytest.mark.parametrize("name", sorted(TRACES))
def test_each_buffered_observation_counts_as_mastra_counted_it(name: str) -> None:
    counter = get_counter("tokenx")
    wrong = [(entry["tokens"], ours) for entry in TRACES[name]["chunk_observations"]
             if (ours := counter.count_observations(entry["text"])) != entry["tokens"]]
    assert wrong == []
