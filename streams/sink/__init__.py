"""The ClickHouse sink: topic records to tables (see :mod:`streams.sink.service` for guarantees)."""

from streams.sink.service import Sink, SinkOptions, SinkStats

__all__ = ["Sink", "SinkOptions", "SinkStats"]
