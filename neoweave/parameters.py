"""Typed NAME=VALUE overrides for the dataclass parameters of strategies and enrich steps (CLI, eval)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
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


def unprefixed(owner: str, values: Mapping[str, Any], others: Collection[str]) -> dict[str, Any]:
    """`values` with `OWNER.NAME` keys read as `NAME`, so the form `neoweave eval -P` takes (and error hints print,
    `-P khl.mode=hlpg`) works wherever one strategy's parameters are given; a key that names another of `others`
    is refused rather than ignored, and a parameter given both ways is refused."""
    plain: dict[str, Any] = {}
    for key, value in values.items():
        prefix, dot, rest = str(key).partition(".")
        name = rest if dot and prefix == owner else str(key)
        if dot and prefix != owner and prefix in others:
            raise NeoweaveError(f"parameter {key!r} belongs to strategy '{prefix}', but this request runs '{owner}'",
                                hint=f"give {rest}=... with strategy '{prefix}', or leave it out")
        if name in plain:
            raise NeoweaveError(f"parameter {name!r} is given twice (as {name} and {owner}.{name})")
        plain[name] = value
    return plain


def coerce_parameters(cls: type, values: dict[str, Any], *, what: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Parameters given as text (`-P NAME=VALUE`), JSON values (an HTTP body) or Python values, typed like the
    dataclass field defaults of `cls`: the one parser behind the CLI, the HTTP API and the Python API.

    Text and JSON scalars go through `parse_parameter` (so `k=5`, `{"k": 5}` and `{"k": "5"}` agree); a list
    is accepted for a tuple parameter; any other value is refused with the parameter named.
    """
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name not in skip}
    typed: dict[str, Any] = {}
    for name, value in values.items():
        key = str(name).strip().replace("-", "_")
        if key not in fields:
            raise NeoweaveError(f"{what} has no parameter {key!r}; its parameters: {sorted(fields)}")
        default = fields[key].default
        if isinstance(value, list | tuple) and isinstance(default, tuple):
            if not all(isinstance(part, str | int | float) and not isinstance(part, bool) for part in value):
                raise NeoweaveError(f"{what}: parameter {key} takes a list of words")
            typed[key] = tuple(str(part) for part in value)
            continue
        if isinstance(value, dict | list | tuple) or (value is not None and not isinstance(value, str | int | float)):
            raise NeoweaveError(f"{what}: parameter {key} must be a number, text or true/false, not "
                                f"{type(value).__name__}")
        if default is None and not isinstance(value, str):  # optional parameters keep the value given
            typed[key] = value
            continue
        if isinstance(value, float) and isinstance(default, int) and not isinstance(default, bool):
            if not value.is_integer():
                raise NeoweaveError(f"{what}: parameter {key} takes an int, got {value!r}")
            value = int(value)
        text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        typed.update([parse_parameter(cls, f"{key}={text}", what=what, skip=skip)])
    return typed


def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each dataclass field (`k: int = 5` then `\"\"\"Chunks retrieved.\"\"\"`), read
    from the source of `cls` and its bases: the one source of help texts, `neoweave strategies` and schemas."""
    import ast
    import inspect
    import textwrap

    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not dataclasses.is_dataclass(klass):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
        for node, following in zip(body, [*body[1:], None], strict=True):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def describe_parameters(cls: type, *, skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Each init field of a dataclass: name, type name, default and its documentation."""
    docs = field_docs(cls)
    described = []
    for field in dataclasses.fields(cls):
        if not field.init or field.name in skip:
            continue
        default = field.default if field.default is not dataclasses.MISSING else (
            field.default_factory() if field.default_factory is not dataclasses.MISSING else None)
        kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", str(field.type))
        described.append({"name": field.name, "type": kind, "default": default, "doc": docs.get(field.name, "")})
    return described
