"""Which rows each topic's record becomes, and what refuses one (the sink's first step, per record).

:class:`Converter` maps a record to its rows by topic (:mod:`streams.sink.rows`), or to the error
that refuses it: the sink dead-letters such a record with the error's stage (``decode`` for bytes
no schema reads, ``validate`` for a record that reads but breaks a rule), or skips and counts it
when the processor refuses and dead-letters it itself (:class:`NotMaterialised`). The results topic
is read only for the cost ledger or a budget.
"""

from __future__ import annotations

from collections.abc import Callable

from aiokafka.structs import ConsumerRecord

from schemas.base import SchemaError
from streams.sink.options import SinkOptions
from streams.sink.rows import Rows, delta_rows, event_rows, message_rows, result_rows
from streams.stored_messages import NotMaterialised
from streams.topics import Topics


class Converter:
    def __init__(self, topics: Topics, options: SinkOptions) -> None:
        self._by_topic: dict[str, Callable[[ConsumerRecord], Rows]] = {
            topics.messages: lambda r: message_rows(r.key, r.value, r.offset, options.redactor, options.scope),
            topics.events: lambda r: event_rows(_key(r), r.value, r.offset),
            topics.records: lambda r: delta_rows(r.value, options.redactor),
        }
        if options.ledger or options.daily_token_budget:
            self._by_topic[topics.results] = lambda r: result_rows(r.value, r.offset)

    @property
    def topics(self) -> list[str]:
        """The topics the sink reads."""
        return list(self._by_topic)

    def __call__(self, record: ConsumerRecord) -> Rows | Exception:
        try:
            return self._by_topic[record.topic](record)
        except (NotMaterialised, SchemaError, ValueError, TypeError) as error:
            return error


def refusal_stage(error: BaseException) -> str:
    """The dead letter's stage for a record :class:`Converter` refused."""
    unparsable = isinstance(error, UnicodeDecodeError) or (isinstance(error, SchemaError) and not error.field)
    return "decode" if unparsable else "validate"


def _key(record: ConsumerRecord) -> str:
    return record.key.decode() if record.key else ""
