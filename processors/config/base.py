"""What every configuration model shares: spelling, immutability and the numeric quirks.

Rules this file keeps:

* Options are snake_case; Mastra's camelCase spelling is accepted on input too, so a config
  exported from a Mastra app reads as is. Unknown options are refused, so a typo never turns into a
  silently ignored setting.
* Config objects are frozen: the resolved thresholds are computed once at construction and must
  never drift from the options they came from.
* JSON ``true`` is refused where a number is expected (pydantic would read it as ``1``, which for
  ``buffer_tokens`` means "one token").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasGenerator, BaseModel, BeforeValidator, ConfigDict

from schemas.base import both_spellings


class ConfigModel(BaseModel):
    """Base of every configuration model."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        alias_generator=AliasGenerator(validation_alias=both_spellings),
    )

    def _derive(self, **fields: Any) -> None:
        """Fill derived fields from an after-validator; the model is frozen for everyone else."""
        for name, value in fields.items():
            object.__setattr__(self, name, value)


def _refuse_true(value: Any) -> Any:
    if value is True:
        raise ValueError("true is not a number; give a number (or false where false is allowed)")
    return value


def _number_or_false(value: Any) -> Any:
    # An int 0 would otherwise match Literal[False] (0 == False) and silently mean "off".
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return _refuse_true(value)


NoTrue = BeforeValidator(_refuse_true)
"""Attach to numeric options so that JSON ``true`` is an error instead of the number 1."""

Number = Annotated[float, NoTrue]
Count = Annotated[int, NoTrue]
NumberOrFalse = Annotated[float | Literal[False], BeforeValidator(_number_or_false)]

