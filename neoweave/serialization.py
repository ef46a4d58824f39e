"""Dataclasses back from their `as_dict()` JSON: a result answered by a running `neoweave serve` is printed by
the command line exactly like one computed in-process."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, Union

T = TypeVar("T")


def from_data(cls: type[T], data: dict[str, Any]) -> T:
    """An instance of the dataclass `cls` from plain data (unknown keys, such as computed properties, ignored)."""
    hints = typing.get_type_hints(cls)
    values = {field.name: _convert(hints.get(field.name, Any), data[field.name])
              for field in dataclasses.fields(cls) if field.init and field.name in data}
    return cls(**values)


def _convert(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return from_data(kind, value)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is list:
        return [_convert(args[0], item) for item in value] if args else list(value)
    if origin is tuple:
        return tuple(value)
    if origin is dict:
        return {key: _convert(args[1], item) for key, item in value.items()} if args else dict(value)
    if origin in (Union, types.UnionType):
        for arg in args:
            if isinstance(arg, type) and dataclasses.is_dataclass(arg) and isinstance(value, dict):
                return from_data(arg, value)
    return value
