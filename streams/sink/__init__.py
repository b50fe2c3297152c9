"""The ClickHouse sink: topic records to tables (see :mod:`streams.sink.service` for guarantees).

The names below load :mod:`streams.sink.service` when first asked for, so a module of this package
that needs none of it (the reader's shared window parses, streams/sink/window_parses.py) does not
load the sink with it, nor import the reader back through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streams.sink.service import Sink, SinkOptions, SinkStats

__all__ = ["Sink", "SinkOptions", "SinkStats"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from streams.sink import service

        return getattr(service, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
