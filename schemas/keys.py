"""The lookup key: the Kafka key of every OM event and the identity of one memory record.

``thread:<threadId>`` in thread scope, ``resource:<resourceId>`` in resource scope (spec §3.1).
It is what routes all events of one record to one partition, so one owner (ARCHITECTURE rule 1);
a key without its scope prefix would silently split a record across owners, hence the pattern.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

LookupKey = Annotated[str, Field(pattern=r"^(thread|resource):.+$")]
