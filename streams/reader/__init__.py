"""The agent-side reader: Python API (:class:`Reader`) and HTTP service (:mod:`streams.reader.http`).

The names below load :mod:`streams.reader.api` when first asked for, so a module of this package that
needs none of it (``om reader serve``'s command, imported with every ``om`` command) does not load
the reader, the sink and chDB with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streams.reader.api import NotCaughtUp, Reader, ThreadNotFound

__all__ = ["NotCaughtUp", "Reader", "ThreadNotFound"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from streams.reader import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
