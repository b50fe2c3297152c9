"""Decoding a topic whose records are one of several models, told apart by a tag field.

Pydantic can decode a tagged union in one call, but its error paths then start with the tag
(``turn-start.thread_id``), and a missing tag reads as a union error. A dead-letter reason should
name the field a producer got wrong, so we pick the model by its tag first and let that model's own
:meth:`VersionedModel.from_obj` report (and check the schema version) as if it stood alone.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, get_args

from pydantic import ConfigDict, Tag

from schemas.base import SchemaError, VersionedModel, WireModel, decode


class _AnyObject(WireModel):
    """Any JSON object: lets :func:`decode` do the JSON and not-an-object checks for us."""

    model_config = ConfigDict(extra="allow")


def tag_reader(tag_field: str) -> Callable[[Any], str]:
    """A callable for ``pydantic.Discriminator`` reading ``tag_field`` from a dict or a model."""

    def read(value: Any) -> str:
        tag = value.get(tag_field) if isinstance(value, dict) else getattr(value, tag_field, None)
        return tag if isinstance(tag, str) else ""

    return read


def members_by_tag(union: Any) -> dict[str, type[VersionedModel]]:
    """``{tag: model}`` of an ``Annotated[Union[Annotated[Model, Tag(t)], ...], Discriminator]``.

    Read from the union itself so the union stays the one list of a topic's models.
    """
    union_type = get_args(union)[0]
    table: dict[str, type[VersionedModel]] = {}
    for member in get_args(union_type):
        model, *metadata = get_args(member)
        for item in metadata:
            if isinstance(item, Tag):
                table[item.tag] = model
    return table


def decode_tagged(
    data: bytes | str, tag_field: str, members: Mapping[str, type[VersionedModel]]
) -> VersionedModel:
    """Bytes to the member model named by ``tag_field``, or :class:`SchemaError` naming the field."""
    obj: dict[str, Any] = dict(decode(_AnyObject, data).model_extra or {})
    tag = obj.get(tag_field)
    model = members.get(tag) if isinstance(tag, str) else None
    if model is None:
        raise SchemaError(tag_field, f"expected one of {sorted(members)}, got {tag!r}")
    return model.from_obj(obj)
