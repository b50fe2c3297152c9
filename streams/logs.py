"""Structured logs: one JSON object per line, with the ``extra`` fields a call site passes.

Call sites log an event name (``om.job.done``) plus ids and counts — never message text or keys.
aiokafka's repeated failures about a dead broker are folded into a few WARNING lines
(:mod:`streams.broker_log`) so they do not bury the worker's own log.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

from streams.broker_log import BrokerLossHandler

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "event": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def json_handler() -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    return handler


def configure(level: str = "INFO") -> None:
    """JSON logs on stderr; chatty libraries (litellm logs prompts' metadata at INFO) at WARNING,
    a dead broker's flood of aiokafka errors folded (streams/broker_log.py)."""
    handler = BrokerLossHandler(json_handler())
    handler.setLevel(level.upper())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.Formatter.converter = time.gmtime
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
