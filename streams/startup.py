"""Reading the configuration a command starts with: it is valid, or the start stops with one line.

A bad ``OM_*`` setting, an ``OM_CONFIG_FILE`` that is not a JSON object of valid Mastra options, or
a model string no provider answers to, ends ``om run`` before anything connects, with one readable
line on stderr (issue 18 item 11) — never a multi-screen traceback, never a run with defaults. The
line names fields and reasons only: a refused value (a bearer token) is never echoed.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_settings import SettingsError

from processors.config import OMConfig
from streams.om_config import ConfigError, load_config
from streams.settings import Settings, get_settings


def configured(*, models: bool = True) -> tuple[Settings, OMConfig]:
    """The settings and OM config, checked; ``models``: also check every model string resolves."""
    try:
        settings = get_settings()
        config = load_config(settings)
        if models:
            check_models(config)
    except (ValidationError, SettingsError, ConfigError) as error:
        raise SystemExit(f"om: bad configuration: {one_line(error)}") from None
    return settings, config


def check_models(config: OMConfig) -> None:
    """Every model the Observer or Reflector may call has a provider litellm knows (offline check).

    Importing litellm costs ~4 s of every start; when every model is the built-in offline one (the
    demo, the tests, the benchmarks) nothing needs it, and the first model call imports it."""
    from streams.llm.endpoints import configured_models
    from streams.llm.models import is_offline, to_litellm_model

    named = configured_models(config)
    if all(is_offline(name) for _, name in named):
        return
    import litellm

    from streams.llm.deterministic.provider import register

    register()
    litellm.suppress_debug_info = True  # its "Provider List" banner would follow every refusal
    for role, name in named:
        try:
            litellm.get_llm_provider(to_litellm_model(name).partition("?")[0])
        except Exception:  # noqa: BLE001 - litellm raises several types for an unknown provider
            raise ConfigError(f"the {role} model {name!r} names no known provider; write "
                              "provider/model, e.g. openai/gpt-4o-mini or google/gemini-2.5-flash") from None


def one_line(error: Exception) -> str:
    if isinstance(error, ValidationError):
        settings = error.title == Settings.__name__
        return "; ".join(_where(e["loc"], settings) + e["msg"] for e in error.errors(include_url=False))
    if isinstance(error, SettingsError) and error.__cause__ is not None:
        return f"{error} ({type(error.__cause__).__name__}: {error.__cause__})"
    return str(error)


def _where(loc: tuple, settings: bool) -> str:
    if not loc:
        return ""
    path = ".".join(str(part) for part in loc)
    return f"OM_{path.upper()}: " if settings else f"{path}: "
