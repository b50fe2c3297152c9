"""Turn the user's buffering knobs into token counts, refusing every inconsistent mix (§2.3–2.4).

Most knobs have two encodings told apart by magnitude: a fraction of the threshold or an absolute
token count (``buffer_tokens`` 0.2 vs 5000, ``buffer_activation`` 0.8 vs 5000, ``block_after``
1.2 vs 50000). They are decoded once, here, into :class:`ResolvedConfig`, so that the decision core
only ever sees token counts and never re-interprets an encoding.

Whether an option was *set* matters, not only its value: under ``scope='resource'`` async buffering
is silently off unless the user asked for it (then it is an error), and the shareTokenBudget error
explains either "remove your buffering options" or "buffering is on by default".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from processors.tokens.js_compat import js_round

if TYPE_CHECKING:
    from processors.config.model import OMConfig

V = TypeVar("V")

DEFAULT_BUFFER_TOKENS = 0.2
DEFAULT_BUFFER_ACTIVATION = 0.8
DEFAULT_BLOCK_AFTER = 1.2
DEFAULT_REFLECTION_BUFFER_ACTIVATION = 0.5
ABSOLUTE_ACTIVATION_MIN = 1000
ABSOLUTE_BLOCK_AFTER_MIN = 100


@dataclass(frozen=True)
class ResolvedConfig:
    """Every threshold in tokens (or ms), decoded once. ``None`` means "this feature is off"."""

    message_tokens_min: int
    message_tokens_max: int
    buffer_tokens: int | None
    activation_ratio: float | None
    retention_floor: int | None
    block_after: int | None
    reflection_tokens: int
    reflection_buffer_activation: float | None
    reflection_block_after: int | None
    async_observation: bool
    async_reflection: bool
    activate_after_idle: int | Literal["auto"] | None
    reflection_activate_after_idle: int | Literal["auto"] | None
    activate_on_provider_change: bool
    reflection_activate_on_provider_change: bool
    retention_floor_is_absolute: bool = False
    """``buffer_activation`` was given in tokens (≥ 1000); record overrides need to know (§2.1)."""


def _show(value: float) -> str:
    """Numbers as the user wrote them: 30000, not 30000.0."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def _buffering_wanted(config: OMConfig) -> bool:
    """Async buffering is on by default in thread scope; in resource scope only when asked for."""
    obs, refl = config.observation, config.reflection
    if obs.buffer_tokens is False:
        return False
    asked = any(
        value is not None
        for value in (obs.buffer_tokens, obs.buffer_activation, refl.buffer_activation)
    )
    return asked or config.scope == "thread"


def _async_buffering_on(config: OMConfig) -> bool:
    wanted = _buffering_wanted(config)
    if wanted and config.scope == "resource":
        raise ValueError(
            "async buffering is not yet supported with scope: 'resource'; remove "
            "observation.buffer_tokens, observation.buffer_activation and "
            "reflection.buffer_activation (buffering is then off), or set "
            "observation.buffer_tokens: false"
        )
    return wanted


def _refuse_share_token_budget(config: OMConfig) -> None:
    obs = config.observation
    explicit = any(
        value is not None and value is not False
        for value in (obs.buffer_tokens, obs.buffer_activation, obs.block_after)
    )
    if explicit:
        raise ValueError(
            "share_token_budget requires async buffering off: remove observation.buffer_tokens, "
            "observation.buffer_activation and observation.block_after, and set "
            "observation.buffer_tokens: false"
        )
    raise ValueError(
        "share_token_budget requires async buffering off, and async buffering is on by default: "
        "set observation.buffer_tokens: false"
    )


def _buffer_tokens(value: float, threshold: int) -> int:
    if value <= 0:
        raise ValueError(f"observation.buffer_tokens must be > 0; got {_show(value)}")
    tokens = js_round(threshold * value) if value < 1 else js_round(value)
    if tokens <= 0:
        raise ValueError(
            f"observation.buffer_tokens {_show(value)} resolves to {tokens} tokens; must be > 0"
        )
    if tokens >= threshold:
        raise ValueError(
            f"observation.buffer_tokens ({tokens} tokens) must be less than "
            f"observation.message_tokens ({threshold})"
        )
    return tokens


def _retention(value: float, threshold: int) -> tuple[float, int, bool]:
    """(storage ratio, retention floor, floor given in tokens) for ``buffer_activation``."""
    if value <= 0:
        raise ValueError(f"observation.buffer_activation must be > 0; got {_show(value)}")
    if 1 < value < ABSOLUTE_ACTIVATION_MIN:
        raise ValueError(
            f"observation.buffer_activation must be <= 1 (a ratio) or >= {ABSOLUTE_ACTIVATION_MIN} "
            f"(an absolute retention floor in tokens); got {_show(value)}"
        )
    if value <= 1:
        return value, js_round(threshold * (1 - value)), False
    if value >= threshold:
        raise ValueError(
            f"observation.buffer_activation ({_show(value)} tokens) must be less than "
            f"observation.message_tokens ({threshold})"
        )
    return _clamp01(1 - value / threshold), js_round(value), True


def _block_after(value: float, threshold: int, path: str, threshold_path: str) -> int:
    tokens = js_round(threshold * value) if value < ABSOLUTE_BLOCK_AFTER_MIN else js_round(value)
    if tokens < threshold:
        raise ValueError(
            f"{path} ({_show(value)} → {tokens} tokens) must be >= {threshold_path} ({threshold}); "
            f"values below {ABSOLUTE_BLOCK_AFTER_MIN} multiply the threshold, others are tokens"
        )
    return tokens


def _why_buffering_is_off(config: OMConfig) -> str:
    if config.observation.buffer_tokens is False:
        return "observation.buffer_tokens is false"
    return "scope 'resource' turns it off"


def _observation_knobs(
    config: OMConfig, threshold: int, buffering: bool
) -> tuple[int | None, float | None, int | None, int | None, bool]:
    """(buffer tokens, storage ratio, retention floor, block_after, floor given in tokens)."""
    obs = config.observation
    if obs.buffer_activation is not None:
        _retention(obs.buffer_activation, threshold)
    if obs.block_after is not None and not buffering:
        raise ValueError(
            "observation.block_after requires async buffering (observation.buffer_tokens), "
            f"which is off: {_why_buffering_is_off(config)}"
        )
    if not buffering:
        return None, None, None, None, False
    buffer_tokens = _buffer_tokens(_or(obs.buffer_tokens, DEFAULT_BUFFER_TOKENS), threshold)
    ratio, floor, absolute = _retention(
        _or(obs.buffer_activation, DEFAULT_BUFFER_ACTIVATION), threshold
    )
    block_after = _block_after(
        _or(obs.block_after, DEFAULT_BLOCK_AFTER),
        threshold,
        "observation.block_after",
        "observation.message_tokens",
    )
    return buffer_tokens, ratio, floor, block_after, absolute


def _reflection_knobs(config: OMConfig, buffering: bool) -> tuple[float | None, int | None]:
    """(buffer activation, block_after) of reflection; it is async exactly when buffering is."""
    refl = config.reflection
    if refl.buffer_activation is not None and not 0 < refl.buffer_activation <= 1:
        raise ValueError(
            f"reflection.buffer_activation must be in (0, 1]; got {_show(refl.buffer_activation)}"
        )
    if refl.block_after is not None and not buffering:
        raise ValueError(
            "reflection.block_after requires async reflection (reflection.buffer_activation with "
            f"async buffering on), which is off: {_why_buffering_is_off(config)}"
        )
    if not buffering:
        return None, None
    block_after = _block_after(
        _or(refl.block_after, DEFAULT_BLOCK_AFTER),
        refl.observation_tokens,
        "reflection.block_after",
        "reflection.observation_tokens",
    )
    return _or(refl.buffer_activation, DEFAULT_REFLECTION_BUFFER_ACTIVATION), block_after


def resolve_config(config: OMConfig) -> ResolvedConfig:
    """Decode and cross-check the buffering knobs; raises ``ValueError`` naming the option."""
    obs, refl = config.observation, config.reflection
    low = obs.message_tokens
    high = low + refl.observation_tokens if config.share_token_budget else low
    if config.share_token_budget and _buffering_wanted(config):
        _refuse_share_token_budget(config)
    buffering = _async_buffering_on(config)
    buffer_tokens, ratio, floor, block_after, absolute = _observation_knobs(config, high, buffering)
    reflection_activation, reflection_block_after = _reflection_knobs(config, buffering)
    return ResolvedConfig(
        message_tokens_min=low,
        message_tokens_max=high,
        buffer_tokens=buffer_tokens,
        activation_ratio=ratio,
        retention_floor=floor,
        block_after=block_after,
        reflection_tokens=refl.observation_tokens,
        reflection_buffer_activation=reflection_activation,
        reflection_block_after=reflection_block_after,
        async_observation=buffering,
        async_reflection=buffering,
        activate_after_idle=_inherit(obs.activate_after_idle, config.activate_after_idle),
        reflection_activate_after_idle=_inherit(refl.activate_after_idle, None),
        activate_on_provider_change=_or(
            obs.activate_on_provider_change, config.activate_on_provider_change
        ),
        reflection_activate_on_provider_change=refl.activate_on_provider_change,
        retention_floor_is_absolute=absolute,
    )


def _or(value: V | None, default: V) -> V:
    return default if value is None else value


def _inherit(
    own: int | Literal["auto", False] | None, inherited: int | Literal["auto", False] | None
) -> int | Literal["auto"] | None:
    """A section value wins; ``False`` opts out of the inherited one; unset inherits."""
    value = inherited if own is None else own
    return None if value is False else value
