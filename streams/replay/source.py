"""What every replay source provides, and the error a source raises when its input is wrong.

A source yields messages in a *deterministic* order — the same input always gives the same
sequence — with each thread's messages in their original order. That is what makes a position in
the sequence a valid checkpoint, and a second run a byte-for-byte repeat the pipeline ignores.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from schemas.messages import ChatMessage


class ReplayInputError(ValueError):
    """The source cannot be read as claimed; the message names the place and the fix."""


class ReplaySource(Protocol):
    #: stable name of the input (kind and location), the checkpoint's key
    identity: str

    def fingerprint(self) -> str:
        """Changes when the input changes, so a stale checkpoint is not trusted."""
        ...

    def count(self) -> int:
        """How many messages :meth:`messages` yields (for the progress bar's total and ETA)."""
        ...

    def messages(self) -> Iterator[ChatMessage]: ...


def file_fingerprint(path: Path) -> str:
    """Size and modification time: cheap, and any edit of the file changes it."""
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"
