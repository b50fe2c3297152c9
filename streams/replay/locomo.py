"""LoCoMo-style multi-session conversations as a replay source.

Input: a JSON list of samples (or one sample), each
``{"sample_id": …, "conversation": {"speaker_a": "Caroline", "speaker_b": "Melanie",
"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{"speaker", "dia_id", "text"}, …], …}}``.

Mapping, chosen so that OM sees the conversation as it happened:

* one thread (and resource) per sample: ``locomo-<sample_id>``;
* ``speaker_a`` is the ``user``, ``speaker_b`` the ``assistant``; roles cannot carry two human
  names, so each text starts with its speaker's name (``"Caroline: …"``);
* a session's turns start at its date-time and are ``TURN_GAP_MS`` apart, keeping order and the
  days between sessions (which drive OM's dates and temporal gaps);
* a shared image's caption (``blip_caption``) is appended to the text as ``[shares a photo: …]``;
* ids are ``<sample_id>:<dia_id>``, so a replay is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from schemas.messages import ChatMessage, TextPart
from streams.replay.source import ReplayInputError, file_fingerprint

TURN_GAP_MS = 30_000
_SESSION = re.compile(r"^session_(\d+)$")


def session_start_ms(text: str) -> int:
    """``"1:56 pm on 8 May, 2023"`` → epoch ms (UTC; LoCoMo dates carry no zone)."""
    try:
        moment = datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    except ValueError as error:
        raise ReplayInputError(f"session date {text!r} is not like '1:56 pm on 8 May, 2023'") from error
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


def sample_messages(sample: dict[str, Any]) -> list[ChatMessage]:
    sample_id = str(sample.get("sample_id", ""))
    conversation = sample.get("conversation")
    if not sample_id or not isinstance(conversation, dict):
        raise ReplayInputError("a LoCoMo sample needs 'sample_id' and a 'conversation' object")
    roles = {conversation.get("speaker_a"): "user", conversation.get("speaker_b"): "assistant"}
    thread = f"locomo-{sample_id}"
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key)))
    messages = []
    for number, key in sessions:
        start = session_start_ms(conversation.get(f"{key}_date_time", ""))
        for index, turn in enumerate(conversation[key] or []):
            role = roles.get(turn.get("speaker"))
            if role is None:
                raise ReplayInputError(f"{sample_id} {key}: speaker {turn.get('speaker')!r} is neither "
                                       "speaker_a nor speaker_b")
            messages.append(ChatMessage(
                id=f"{sample_id}:{turn['dia_id']}", thread_id=thread, resource_id=thread, role=role,
                created_at=start + index * TURN_GAP_MS, parts=[TextPart(text=_text(turn))],
                metadata={"speaker": turn["speaker"], "dia_id": turn["dia_id"], "session": number},
            ))
    return messages


def _text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


class LoCoMoSource:
    def __init__(self, path: Path) -> None:
        self.path = path.expanduser().resolve()
        self.identity = f"locomo:{self.path}"
        self._messages: list[ChatMessage] | None = None

    def fingerprint(self) -> str:
        return file_fingerprint(self.path)

    def count(self) -> int:
        return len(self._load())

    def messages(self) -> Iterator[ChatMessage]:
        return iter(self._load())

    def _load(self) -> list[ChatMessage]:
        if self._messages is None:
            try:
                data = orjson.loads(self.path.read_bytes())
            except (OSError, orjson.JSONDecodeError) as error:
                raise ReplayInputError(f"{self.path}: cannot read LoCoMo JSON ({error})") from error
            samples = data if isinstance(data, list) else [data]
            self._messages = [m for sample in samples for m in sample_messages(sample)]
        return self._messages
