"""Scripted model clients for Observer/Reflector tests (no litellm, no network)."""

from __future__ import annotations

from processors.model_port import ModelCall, ModelCallError, ModelReply, Usage


class ScriptedModel:
    """Answers with the scripted texts in order; an Exception in the script is raised instead."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[ModelCall] = []

    async def complete(self, call: ModelCall) -> ModelReply:
        self.calls.append(call)
        answer = self.answers[min(len(self.calls), len(self.answers)) - 1]
        if isinstance(answer, ModelCallError):
            raise answer
        if isinstance(answer, Exception):
            raise answer
        return ModelReply(text=answer, usage=Usage(input_tokens=10, output_tokens=5), attempts=1, model=call.model)
