"""Every wire model survives its own encoding: ``to_bytes`` leaves out None values (compact records),
so a field that may be None must also have a default, or decoding the record it wrote fails — as
resource-scope record snapshots (``thread_id`` None) once did, stalling nothing but losing the rows."""

from __future__ import annotations

import importlib
import pkgutil
import typing

from pydantic import BaseModel

import schemas
from schemas.base import decode
from schemas.deltas import RecordSnapshot, decode_delta
from schemas.record import OMRecord


def _wire_models() -> list[type[BaseModel]]:
    found = []
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module(f"schemas.{info.name}")
        found += [c for c in vars(module).values()
                  if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == module.__name__]
    return found


def test_no_wire_field_is_both_nullable_and_required() -> None:
    offenders = [f"{model.__name__}.{name}" for model in _wire_models()
                 for name, field in model.model_fields.items()
                 if field.is_required() and type(None) in typing.get_args(field.annotation)]
    assert offenders == []


def test_a_resource_scope_snapshot_round_trips() -> None:
    record = OMRecord(id="r", key="resource:u1", scope="resource", thread_id=None, resource_id="u1")
    snapshot = RecordSnapshot(key="resource:u1", version=1, at=0, record=record)
    assert decode_delta(snapshot.to_bytes()) == snapshot
    assert decode(OMRecord, record.to_bytes()) == record
