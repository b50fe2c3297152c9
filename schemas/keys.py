"""The lookup key: the Kafka key of every OM event and the identity of one memory record.

``thread:<threadId>`` in thread scope, ``resource:<resourceId>`` in resource scope (spec §3.1).
It is what routes all events of one record to one partition, so one owner (ARCHITECTURE rule 1);
a key without its scope prefix would silently split a record across owners, hence the pattern.

Thread, resource and message ids share one rule, checked where a record is accepted
(:data:`Identifier`): 1–1,024 characters, none of them a control character (CR/LF or NUL in an id
would pass a looser check and break a key, a log line or a table row later), and the lookup key
built from an id keeps to it too.
"""

from __future__ import annotations

from typing import Annotated

import re

from pydantic import AfterValidator, Field

MAX_ID_CHARS = 1024
_ID_CHARS = r"[^\x00-\x1f\x7f]"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _no_control_characters(value: str) -> str:
    bad = _CONTROL.search(value)
    if bad:
        raise ValueError(f"an id may not contain control characters (found {bad.group()!r} at {bad.start()})")
    return value


Identifier = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_no_control_characters)]
LookupKey = Annotated[str, Field(pattern=rf"^(thread|resource):{_ID_CHARS}+$")]
