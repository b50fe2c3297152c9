"""Where each role's model is served, how long one request may take, and the output cap of a model
litellm does not know — the worker-side call settings (issue 24).

Rules this file keeps:

* ``OM_MODEL_API_BASE``/``OM_MODEL_API_KEY`` apply to every role; a role's
  ``model_settings.api_base``/``api_key_env`` in the OM config wins for that role. The key is read
  here, from the environment, and kept out of every ``repr`` (so out of logs and tracebacks).
* An extractor follow-up call goes where the call it follows went: it is matched by model name.
* Timeouts are per attempt and per role; the Reflector rewrites the whole log, so it gets longer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from processors.config import OMConfig

DEFAULT_TIMEOUTS: Mapping[str, float] = {"observer": 300.0, "reflector": 600.0, "extractor": 120.0,
                                         "reader": 120.0, "judge": 60.0}
DEFAULT_OUTPUT_TOKENS = 8192


@dataclass(frozen=True)
class Endpoint:
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)

    def kwargs(self) -> dict[str, Any]:
        """What litellm gets: only the values that are set."""
        values = {"api_base": self.api_base, "api_key": self.api_key}
        return {name: value for name, value in values.items() if value}


@dataclass(frozen=True)
class Endpoints:
    default: Endpoint = Endpoint()
    by_role: Mapping[str, Endpoint] = field(default_factory=dict)
    by_model: Mapping[str, Endpoint] = field(default_factory=dict)

    def for_call(self, role: str, model: str) -> Endpoint:
        if role in self.by_role:
            return self.by_role[role]
        return self.by_model.get(model, self.default)


def endpoints_for(api_base: str, api_key: str, config: OMConfig | None,
                  environ: Mapping[str, str] | None = None) -> Endpoints:
    environ = os.environ if environ is None else environ
    default = Endpoint(api_base or None, api_key or None)
    if config is None:
        return Endpoints(default)
    by_role: dict[str, Endpoint] = {}
    by_model: dict[str, Endpoint] = {}
    roles = (("reflector", config.reflection, config.reflector_model()),
             ("observer", config.observation, config.observer_model()))
    for role, section, model in roles:  # the observer last: its endpoint wins a shared model name
        settings = section.model_settings
        if settings.api_base is None and settings.api_key_env is None:
            continue
        key = environ.get(settings.api_key_env, "") if settings.api_key_env else default.api_key
        endpoint = Endpoint(settings.api_base or default.api_base, key or None)
        by_role[role] = endpoint
        for name in _model_names(model):
            by_model[name] = endpoint
    return Endpoints(default, by_role, by_model)


def configured_models(config: OMConfig) -> list[tuple[str, str]]:
    """Every ``(role, model)`` the Observer and Reflector may call, each tier of a tiered model."""
    return [(role, name) for role, model in (("observer", config.observer_model()),
                                             ("reflector", config.reflector_model()))
            for name in _model_names(model)]


def _model_names(model: Any) -> list[str]:
    if hasattr(model, "models"):
        return [str(m) for m in model.models()]
    return [str(model)]
