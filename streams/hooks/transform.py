"""Transform hooks (spec §2.7): operator code that rewrites what the Observer and Reflector see and say.

Hooks are plain Python callables named by import path (``package.module:function``) in
``OM_HOOKS`` and loaded once when the worker starts, so a typo fails the start, not a cycle. Each
is called as ``hook(value, job)`` and always awaited when it returns an awaitable:

* ``before_observation(messages, job)`` → the messages to observe; ``[]`` skips the Observer call
  (the messages still count as observed, with no observation text);
* ``after_observation(text, job)``, ``before_reflection(text, job)``, ``after_reflection(text, job)``
  → replacement text.

``None`` means "unchanged". Several hooks in one slot run in order, each on the previous one's
output. Any exception (or a value of the wrong type) raises :class:`HookFailed`, which the job
runner turns into a failed result: the cycle fails with a ``*-failed`` event and nothing partial
is applied.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import ValidationError

from schemas.jobs import ObserveJob, ReflectJob
from schemas.messages import ChatMessage
from streams.settings import HookSlot, Settings

REDACTION_HOOK = "streams.hooks.redaction:redact_messages"
Hook = Callable[..., Any]


class HookFailed(Exception):
    """A transform hook raised or returned the wrong type; the message names the hook, not the data."""


@dataclass(frozen=True)
class NamedHook:
    path: str
    function: Hook


@dataclass(frozen=True)
class TransformHooks:
    slots: Mapping[str, Sequence[NamedHook]] = field(default_factory=dict)

    async def before_observation(self, job: ObserveJob) -> list[ChatMessage]:
        messages: list[ChatMessage] = list(job.messages)
        for hook in self.slots.get("before_observation", ()):
            returned = await _call("before_observation", hook, messages, job)
            if returned is not None:
                messages = _as_messages(hook, returned)
        return messages

    async def after_observation(self, text: str, job: ObserveJob) -> str:
        return await self._text("after_observation", text, job)

    async def before_reflection(self, text: str, job: ReflectJob) -> str:
        return await self._text("before_reflection", text, job)

    async def after_reflection(self, text: str, job: ReflectJob) -> str:
        return await self._text("after_reflection", text, job)

    async def _text(self, slot: str, text: str, job: ObserveJob | ReflectJob) -> str:
        for hook in self.slots.get(slot, ()):
            returned = await _call(slot, hook, text, job)
            if returned is not None:
                if not isinstance(returned, str):
                    raise HookFailed(f"{slot} hook {hook.path} returned {type(returned).__name__}, not str")
                text = returned
        return text


NO_HOOKS = TransformHooks()


def load_hooks(settings: Settings) -> TransformHooks:
    """Import every configured hook; ``OM_REDACT`` puts the redaction hook first in before_observation."""
    paths: dict[str, list[str]] = {slot: list(settings.hooks.get(slot, [])) for slot in get_args(HookSlot)}
    if settings.redact and REDACTION_HOOK not in paths["before_observation"]:
        paths["before_observation"].insert(0, REDACTION_HOOK)
    return TransformHooks({slot: [NamedHook(p, _import(p)) for p in named] for slot, named in paths.items() if named})


def _import(path: str) -> Hook:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"hook {path!r} must be 'package.module:function'")
    function = getattr(importlib.import_module(module_name), attribute, None)
    if not callable(function):
        raise ValueError(f"hook {path!r} is not a callable")
    return function


async def _call(slot: str, hook: NamedHook, value: Any, job: ObserveJob | ReflectJob) -> Any:
    try:
        returned = hook.function(value, job)
        return await returned if inspect.isawaitable(returned) else returned
    except Exception as exc:  # any hook error fails the cycle, by design
        raise HookFailed(f"{slot} hook {hook.path} failed: {type(exc).__name__}") from exc


def _as_messages(hook: NamedHook, returned: Any) -> list[ChatMessage]:
    if not isinstance(returned, list):
        raise HookFailed(f"before_observation hook {hook.path} returned {type(returned).__name__}, not a list")
    try:
        return [m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m) for m in returned]
    except ValidationError as exc:
        raise HookFailed(f"before_observation hook {hook.path} returned an invalid message") from exc
