"""The OM configuration a worker runs with: a JSON file of Mastra options, or the defaults.

``OM_CONFIG_FILE`` names a JSON document in Mastra's shape (camelCase or snake_case). When it sets
no model, ``OM_MODEL`` chooses one; the offline ``om-deterministic`` provider has one model per role,
so it is expanded to ``…/observer`` and ``…/reflector`` (a ``?latency_ms=…`` query is kept).

A file that is not a JSON object (``[]``, ``true``) is refused with :class:`ConfigError`, as is
an unreadable file or bad JSON: never run with the defaults instead (issue 18 item 11).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from processors.config import OMConfig
from processors.config import deep_merge
from streams.settings import Settings

DETERMINISTIC = "om-deterministic/"


class ConfigError(ValueError):
    """The configuration cannot be read; the message is one line for the operator."""


def load_config(settings: Settings, overrides: dict[str, Any] | None = None) -> OMConfig:
    raw: dict[str, Any] = {}
    if settings.config_file is not None:
        raw = _read(settings.config_file)
    raw = deep_merge(raw, overrides or {})
    if not _model_set(raw):
        raw = deep_merge(raw, _models_for(settings.model))
    return OMConfig.from_mastra(raw)


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = orjson.loads(path.read_bytes())
    except OSError as error:
        raise ConfigError(f"OM_CONFIG_FILE {path}: cannot read it ({error.strerror or error})") from None
    except orjson.JSONDecodeError as error:
        raise ConfigError(f"OM_CONFIG_FILE {path}: not valid JSON ({error})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"OM_CONFIG_FILE {path}: must hold a JSON object of Mastra's observationalMemory "
                          f"options (write {{}} for the defaults), not a JSON {type(raw).__name__}")
    return raw


def _model_set(raw: dict[str, Any]) -> bool:
    sections = (raw, raw.get("observation") or {}, raw.get("reflection") or {})
    return any(section.get("model") for section in sections)


def _models_for(model: str) -> dict[str, Any]:
    if not model.startswith(DETERMINISTIC):
        return {"model": model}
    _, _, query = model.partition("?")
    suffix = f"?{query}" if query else ""
    return {
        "observation": {"model": f"{DETERMINISTIC}observer{suffix}"},
        "reflection": {"model": f"{DETERMINISTIC}reflector{suffix}"},
    }
