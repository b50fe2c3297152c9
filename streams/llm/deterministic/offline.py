"""The offline models answered in-process: what a call to ``om-deterministic/…`` returns, without litellm.

The workers' client (streams/llm/client.py) calls :func:`complete` for these models instead of
``litellm.acompletion``: litellm's wrapper cost ~2.6 ms of CPU per call around an answer that takes
tens of µs on a short prompt, and its import seconds at every start of a worker that calls no
provider. ``provider.py`` keeps the same models reachable through litellm (``litellm.acompletion(
model="om-deterministic/observer")``), answering with the same functions here.

Rules this file keeps:

* **The same answer either way**: :func:`prepare` is the one place a call's fault plan is counted and
  its answer made; both paths return its text, usage at ~4 characters a token, ``finish_reason``
  "stop".
* **Misbehaves like a provider**: a fault plan's errors are litellm's own exception types (imported
  only when one is raised), so the client's retries classify them as they would a provider's.
* **Off the event loop**: the string rules take milliseconds on a long prompt; they run in a
  thread, as a provider's answer comes over a socket, so the worker's loop (fold, sink) goes on.
  In a worker of both roles they run in child processes (:func:`answer_in_processes`), off its
  interpreter lock too.
* Nothing here imports litellm at module level.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streams.llm.deterministic import echo
from streams.llm.deterministic.answer_pool import AnswerPool
from streams.llm.deterministic.faults import DEGENERATE_TEXT, EMPTY_TEXT, MALFORMED_TEXT, FaultCounter, FaultPlan, parse_model
from streams.llm.deterministic.observe import observe
from streams.llm.deterministic.read import judge, read
from streams.llm.deterministic.reflect import reflect
from streams.llm.deterministic.structured import fill_schema
from streams.llm.models import OFFLINE_PROVIDER

PROVIDER = OFFLINE_PROVIDER
FAULTS = FaultCounter()
_POOL: AnswerPool | None = None


def prepare(model: str, messages: list, optional_params: dict[str, Any],
            answerer: Callable[[str, list, dict[str, Any] | None], str] | None = None) -> tuple[FaultPlan, str]:
    """``model`` without the provider prefix (``observer?fail=429&times=2``): its fault plan, and the
    answer's text (:func:`answer`'s, or ``answerer``'s: the worker's child processes); raises the
    plan's error when it fails this call."""
    plan = parse_model(model, optional_params.get("om_deterministic"))
    if FAULTS.should_fail(model, plan):
        failure = _failure(plan, model)
        if isinstance(failure, Exception):
            raise failure
        return plan, failure
    return plan, (answerer or answer)(plan.role, messages, optional_params.get("response_format"))


def answer(role: str, messages: list[dict[str, Any]], response_format: dict[str, Any] | None = None) -> str:
    """The model's answer as a pure function of its input."""
    if response_format and response_format.get("type") == "json_schema":
        return fill_schema(response_format["json_schema"].get("schema", {}), texts(messages))
    system = next((text_of(m) for m in messages if m.get("role") == "system"), "")
    users = [text_of(m) for m in messages if m.get("role") == "user"]
    if role == "reflector":
        return reflect(users[-1] if users else "", system)
    if role == "reader":
        return read([text_of(m) for m in messages])
    if role == "judge":
        return judge(users[-1] if users else "")
    task, history = (users[0], users[-1]) if len(users) > 1 else ("", users[-1] if users else "")
    return (echo.observe if role == "echo" else observe)(system, task, history)


@dataclass
class _Message:
    content: str


@dataclass
class _Choice:
    message: _Message
    finish_reason: str = "stop"


@dataclass
class _Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass
class Reply:
    """A chat completion's shape, as far as the client reads one (choices, usage)."""

    choices: list[_Choice]
    usage: _Usage
    model: str


async def complete(*, model: str, messages: list, response_format: dict[str, Any] | None = None,
                   om_deterministic: dict[str, Any] | None = None, **_ignored: Any) -> Reply:
    """What ``litellm.acompletion(model="om-deterministic/…", …)`` answers, without litellm: the
    arguments litellm would hand the provider are read, the rest (output cap, temperature, timeout:
    the client bounds the call itself) mean nothing to a string rule."""
    text = await answered(model.removeprefix(f"{PROVIDER}/"), messages,
                          {"response_format": response_format, "om_deterministic": om_deterministic})
    return Reply([_Choice(_Message(text))], _Usage(*token_counts(text, messages)), model)


def answer_in_processes(size: int, warm: bool = True) -> None:
    """From now on the answers are made in up to ``size`` child processes (0: in the caller's threads):
    what ``om run`` does for a worker of both roles (streams/llm/deterministic/answer_pool.py).
    ``warm``: start the first child now (the configured models are offline ones), not at a first call."""
    global _POOL
    if _POOL is not None:
        _POOL.close()
    _POOL = AnswerPool(size) if size > 0 else None
    if _POOL is not None and warm:
        _POOL.warm()


async def answered(model: str, messages: list, optional_params: dict[str, Any]) -> str:
    """:func:`prepare` in a thread, then the plan's latency: the answer's text (or the plan's error)."""
    plan, text = await asyncio.to_thread(prepare, model, messages, optional_params,
                                         _POOL.answer if _POOL is not None else None)
    await asyncio.sleep(plan.wait_s([text_of(m) for m in messages]))
    return text


def token_counts(text: str, messages: list) -> tuple[int, int]:
    """The usage reported, prompt and completion: ~4 characters a token."""
    return sum(len(text_of(m)) for m in messages) // 4, len(text) // 4


def _failure(plan: FaultPlan, model: str) -> Exception | str:
    name = f"{PROVIDER}/{model}"
    if plan.fail not in ("429", "500", "503", "timeout", "400"):
        return {"degenerate": DEGENERATE_TEXT, "malformed": MALFORMED_TEXT}.get(plan.fail or "", EMPTY_TEXT)
    import litellm  # its exception types, as a provider's failure raises them (only when one is asked for)

    if plan.fail == "429":
        return litellm.RateLimitError("deterministic rate limit", PROVIDER, name)
    if plan.fail == "500":
        return litellm.InternalServerError("deterministic server error", PROVIDER, name)
    if plan.fail == "503":
        return litellm.ServiceUnavailableError("deterministic overload", PROVIDER, name)
    if plan.fail == "timeout":
        return litellm.Timeout("deterministic timeout", name, PROVIDER)
    return litellm.BadRequestError("deterministic bad request", name, PROVIDER)


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def texts(messages: list[dict[str, Any]]) -> str:
    return "\n".join(text_of(m) for m in messages)
