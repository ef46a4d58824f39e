"""Typed NAME=VALUE overrides for the dataclass parameters of strategies and enrich steps (CLI, eval)."""

from __future__ import annotations

import dataclasses
from typing import Any

from neoweave.errors import NeoweaveError

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def check_at_least(owner: object, what: str, minimum: int, *names: str) -> None:
    """Every named numeric parameter of `owner` is >= minimum, else an error naming it (`what: name ...`)."""
    for name in names:
        value = getattr(owner, name)
        if value < minimum:
            raise NeoweaveError(f"{what}: {name} must be >= {minimum}, got {value}")


def parse_parameter(cls: type, text: str, *, what: str, skip: tuple[str, ...] = ()) -> tuple[str, Any]:
    """'n_links=2' -> ('n_links', 2), typed like the parameter's default; tuples are comma-separated."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name not in skip}
    if not sep or name not in fields:
        raise NeoweaveError(f"{what}: bad parameter {text!r}; expected NAME=VALUE with NAME one of {sorted(fields)}")
    default = fields[name].default
    raw = raw.strip()
    try:
        if isinstance(default, bool):
            if raw.lower() not in _TRUE + _FALSE:
                raise ValueError(raw)
            return name, raw.lower() in _TRUE
        if isinstance(default, int):
            return name, int(raw)
        if isinstance(default, float):
            return name, float(raw)
        if isinstance(default, tuple):
            return name, tuple(part.strip() for part in raw.split(",") if part.strip())
    except ValueError:
        raise NeoweaveError(f"{what}: parameter {name} takes a {type(default).__name__}, got {raw!r}") from None
    if default is None and raw.isdigit():  # optional integers (batch sizes)
        return name, int(raw)
    return name, raw
