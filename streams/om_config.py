"""The OM configuration a worker runs with: a JSON file of Mastra options, or the defaults.

``OM_CONFIG_FILE`` names a JSON document in Mastra's shape (camelCase or snake_case). When it sets
no model, ``OM_MODEL`` chooses one; the offline ``om-deterministic`` provider has one model per role,
so it is expanded to ``…/observer`` and ``…/reflector`` (a ``?latency_ms=…`` query is kept).
"""

from __future__ import annotations

from typing import Any

import orjson

from processors.config import OMConfig
from processors.config import deep_merge
from streams.settings import Settings

DETERMINISTIC = "om-deterministic/"


def load_config(settings: Settings, overrides: dict[str, Any] | None = None) -> OMConfig:
    raw: dict[str, Any] = {}
    if settings.config_file is not None:
        raw = orjson.loads(settings.config_file.read_bytes())
    raw = deep_merge(raw, overrides or {})
    if not _model_set(raw):
        raw = deep_merge(raw, _models_for(settings.model))
    return OMConfig.from_mastra(raw)


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
