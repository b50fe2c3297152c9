"""Where a stored head column stands, (generation, version), without parsing it again each batch.

Bringing a key's row forward (streams/sink/context_appends.py) starts from where its stored head
stands, and the head column is JSON that holds the whole observation log: parsing ~100 kB per key
and batch to read two numbers was ~2.6 % of the processor's interpreter time at 1,000 msgs/s. A
live key's row is brought forward batch after batch from the row the batch before wrote, whose
head string the row cache hands back as the same object (streams/sink/row_cache.py). Rules this
file keeps:

* **Found by the column's identity, bounded** (streams/sink/by_column.py).
* **What is remembered is what parsing gives**: a head this sink made is remembered with the two
  numbers it was made from (:meth:`HeadVersions.made`); any other is parsed once.
"""

from __future__ import annotations

import orjson

from streams.sink.by_column import ByColumn

Standing = tuple[int, int]  # (generation, version)
NONE: Standing = (-1, 0)  # a key with no head yet


class HeadVersions:
    def __init__(self, max_chars: int = 32 << 20) -> None:
        self._known: ByColumn[Standing] = ByColumn(max_chars)

    def of(self, column: str | None) -> Standing:
        """The (generation, version) of a head column (None: no head yet)."""
        if column is None:
            return NONE
        standing = self._known.get(column)
        if standing is None:
            fields = orjson.loads(column)
            standing = (fields["generation"], fields["version"])
            self._known.put(column, standing)
        return standing

    def made(self, column: str, standing: Standing) -> None:
        """``column`` is a head at ``standing``; it is not changed after."""
        self._known.put(column, standing)
