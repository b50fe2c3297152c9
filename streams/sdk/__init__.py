"""The Python SDK: produce messages and control events, watch lifecycle events, read context.

``OMClient`` is async (any asyncio framework); ``SyncOMClient`` is its blocking twin::

    async with OMClient(token="…") as om:
        await om.send({"id": "m1", "threadId": "t1", "resourceId": "u1", "role": "user",
                       "createdAt": 1733000000000, "parts": [{"type": "text", "text": "hi"}]})
        async with om.events(["observation-end"], thread_id="t1") as events:
            async for event in events:
                ...
        context = await om.context("t1", "u1", wait_for_message_id="m1")
"""

from streams.sdk.client import OMClient
from streams.sdk.events import EventStream
from streams.sdk.reader import ReaderClient, ReaderError
from streams.sdk.sync import SyncOMClient

__all__ = ["EventStream", "OMClient", "ReaderClient", "ReaderError", "SyncOMClient"]
