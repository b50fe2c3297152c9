"""The replay checkpoint: per source (and target topic prefix), how far replay got for sure.

A position is written only after every message before it was acknowledged by the broker, so a
resume never skips a message; it may re-send the batch that was in flight when the run stopped,
which the pipeline ignores (a message id is one message). A position is trusted only while the
source's fingerprint is unchanged: an edited source starts over, which is safe for the same reason.

The file is small JSON, replaced atomically (write a temporary file, then rename), so a crash
mid-write leaves the previous checkpoint intact.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson


@dataclass(frozen=True)
class Progress:
    fingerprint: str
    position: int = 0
    completed: bool = False


class CheckpointFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, key: str, fingerprint: str) -> Progress:
        """Where to resume ``key``; a fresh start when unknown or when the source changed since."""
        saved = self._read().get(key)
        if saved is None or saved.get("fingerprint") != fingerprint:
            return Progress(fingerprint)
        return Progress(fingerprint, int(saved.get("position", 0)), bool(saved.get("completed", False)))

    def save(self, key: str, progress: Progress) -> None:
        entries = self._read()
        entries[key] = asdict(progress)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(orjson.dumps(entries, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        os.replace(temporary, self.path)

    def _read(self) -> dict[str, dict]:
        try:
            data = orjson.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except orjson.JSONDecodeError as error:
            raise ValueError(f"checkpoint file {self.path} is not JSON ({error}); delete it to start over "
                             "(replay is idempotent, so nothing is duplicated)") from error
        return data if isinstance(data, dict) else {}
