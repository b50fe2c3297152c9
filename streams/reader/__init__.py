"""The agent-side reader: Python API (:class:`Reader`) and HTTP service (:mod:`streams.reader.http`)."""

from streams.reader.api import NotCaughtUp, Reader, ThreadNotFound

__all__ = ["NotCaughtUp", "Reader", "ThreadNotFound"]
