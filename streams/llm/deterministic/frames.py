"""Frames on a pipe between a worker and its offline model's processes: a 4-byte big-endian length,
then that many bytes (JSON, see answer_child.py)."""

from __future__ import annotations

from typing import BinaryIO


def read_frame(stream: BinaryIO) -> bytes | None:
    """One frame's body; None when the stream ended (before or inside a frame)."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    size = int.from_bytes(head, "big")
    body = stream.read(size)
    return body if len(body) == size else None


def write_frame(stream: BinaryIO, body: bytes) -> None:
    stream.write(len(body).to_bytes(4, "big") + body)
    stream.flush()
