"""Graph snapshots and their difference: is a graph maintained by increments the graph a rebuild would give?

A snapshot holds every node (by label and key) and every relationship (by type and its ends' keys, parallel
edges as a multiset) with its properties, minus the declared exceptions: timestamps and the write stamp (when,
not what), and nothing else. Floats are compared to 1e-9 relative, vectors (embeddings) by cosine: the embedder
pads a batch to its longest text, so the same text embedded in another batch differs in the 7th digit. The randomized
incremental-vs-rebuild check (`neoweave.kb.rebuild_check`) diffs two of them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from neoweave.graph_schema.model import BOOKKEEPING
from neoweave.store.base import GraphStore

TIMESTAMPS = frozenset({"created_at", "updated_at", "edited_at", "undone_at"})
"""Properties recording when something was written: differ between any two builds, by design."""

SETS = frozenset({"enriched"})
"""List properties that are sets: a chunk's `enriched` lists the step signatures that processed it, in the order
the steps happened to run; compared as sets."""

PARALLEL_LISTS: dict[str, tuple[str, ...]] = {
    "RELATED": ("chunk_ids", "chunk_weights", "descriptions"),
    "MENTIONS": ("origin_ids", "names", "types", "counts", "contexts", "methods", "sources"),
}
"""Evidence kept as parallel lists (one entry per chunk, or per surface form): sets whose order is the order the
evidence arrived in; compared sorted by their first list (the values derived from them, such as a relation's
`description` or a mention's `name`, are chosen by the smallest key, so they do not depend on that order)."""

_VECTOR_MIN_LENGTH = 32
_VECTOR_MIN_COSINE = 1 - 1e-5
_FLOAT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Vector:
    """An embedding inside a snapshot: equal to another when their cosine is 1 within rounding."""

    values: tuple[float, ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vector) or len(other.values) != len(self.values):
            return False
        dot = sum(a * b for a, b in zip(self.values, other.values, strict=True))
        norms = math.sqrt(sum(a * a for a in self.values)) * math.sqrt(sum(b * b for b in other.values))
        if norms == 0:
            return dot == 0
        return dot / norms >= _VECTOR_MIN_COSINE

    def __hash__(self) -> int:
        return hash(len(self.values))

    def __repr__(self) -> str:
        return f"<vector {len(self.values)}>"


def _plain(value: Any, *, as_set: bool = False) -> Any:
    """A property value in comparable form: vectors wrapped, floats rounded, lists of lists as tuples."""
    if isinstance(value, list | tuple):
        if len(value) >= _VECTOR_MIN_LENGTH and all(isinstance(v, float) for v in value):
            return Vector(tuple(value))
        items = tuple(_plain(v) for v in value)
        return tuple(sorted(items, key=repr)) if as_set else items
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


def _sort_key(props: dict[str, Any]) -> str:
    return repr(sorted((k, v) for k, v in props.items() if not isinstance(v, Vector)))


@dataclass
class Snapshot:
    """Nodes by (label set, key) and relationships by (type, start, end) -> sorted list of property maps."""

    nodes: dict[tuple[str, Any], dict[str, Any]] = field(default_factory=dict)
    relationships: dict[tuple[str, str, str], list[dict[str, Any]]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        by_kind: dict[str, int] = defaultdict(int)
        for label, _ in self.nodes:
            by_kind[label] += 1
        for (rel_type, _, _), edges in self.relationships.items():
            by_kind[rel_type] += len(edges)
        return dict(sorted(by_kind.items()))


def snapshot(store: GraphStore, *, ignore: frozenset[str] = TIMESTAMPS) -> Snapshot:
    """Read the whole graph into a `Snapshot` (for test- and benchmark-sized graphs: it holds every vector)."""
    shot = Snapshot()
    ignore = ignore | BOOKKEEPING  # never part of what a graph holds (even with `ignore` empty)
    for row in store.run("snapshot_nodes"):
        label = ":".join(sorted(row["labels"]))
        props = {k: _plain(v, as_set=k in SETS) for k, v in row["props"].items() if k not in ignore}
        shot.nodes[(label, row["key"])] = props
    edges: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in store.run("snapshot_relationships"):
        start = f"{row['start_label']}:{row['start_key']}"
        end = f"{row['end_label']}:{row['end_key']}"
        props = _in_key_order(row["props"], PARALLEL_LISTS.get(row["type"], ()))
        edges[(row["type"], start, end)].append({k: _plain(v) for k, v in props.items() if k not in ignore})
    shot.relationships = {key: sorted(found, key=_sort_key) for key, found in edges.items()}
    return shot


def _in_key_order(props: dict[str, Any], lists: tuple[str, ...]) -> dict[str, Any]:
    """`props` with the parallel lists `lists` reordered by the values of the first."""
    if not lists or not isinstance(props.get(lists[0]), list):
        return props
    order = sorted(range(len(props[lists[0]])), key=lambda i: repr(props[lists[0]][i]))
    out = dict(props)
    for name in lists:
        values = props.get(name)
        if isinstance(values, list) and len(values) == len(order):
            out[name] = [values[i] for i in order]
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=_FLOAT_TOLERANCE, abs_tol=_FLOAT_TOLERANCE)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _property_differences(where: str, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(_changed_properties(a, b)):
        if key not in b:
            out.append(f"{where}: property {key} only in the first ({_short(a[key])})")
        elif key not in a:
            out.append(f"{where}: property {key} only in the second ({_short(b[key])})")
        else:
            out.append(f"{where}: {key} {_short(a[key])} != {_short(b[key])}")
    return out


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff(first: Snapshot, second: Snapshot, *, limit: int = 200) -> list[str]:
    """Human-readable differences between two snapshots (empty when they are the same graph)."""
    out: list[str] = []
    for key in sorted(set(first.nodes) | set(second.nodes), key=repr):
        where = f"node {key[0]} {key[1]!r}"
        if key not in second.nodes:
            out.append(f"{where} only in the first")
        elif key not in first.nodes:
            out.append(f"{where} only in the second")
        else:
            out += _property_differences(where, first.nodes[key], second.nodes[key])
    for key in sorted(set(first.relationships) | set(second.relationships)):
        a, b = first.relationships.get(key, []), second.relationships.get(key, [])
        where = f"{key[0]} {key[1]} -> {key[2]}"
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} edge(s) in the first, {len(b)} in the second"
                       + (f" ({_short(a[0] if a else b[0])})" if a or b else ""))
            continue
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            out += _property_differences(f"{where} #{index}" if len(a) > 1 else where, x, y)
    return out[:limit] if limit else out


def changed(first: Snapshot, second: Snapshot) -> set[str]:
    """What differs between two snapshots as a footprint (`graph_schema.footprint`): a label or relationship type
    whose nodes or edges were added or removed, "Label.property" / "TYPE.property" for a changed property. A
    write's declared footprint must cover what it changed."""
    out: set[str] = set()
    for key in set(first.nodes) | set(second.nodes):
        labels = key[0].split(":")
        if key not in first.nodes or key not in second.nodes:
            out.update(labels)
        else:
            out.update(f"{label}.{prop}" for prop in _changed_properties(first.nodes[key], second.nodes[key])
                       for label in labels)
    for key in set(first.relationships) | set(second.relationships):
        a, b = first.relationships.get(key, []), second.relationships.get(key, [])
        if len(a) != len(b):
            out.add(key[0])
        else:
            out.update(f"{key[0]}.{prop}" for x, y in zip(a, b, strict=True) for prop in _changed_properties(x, y))
    return out


def _changed_properties(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [key for key in set(a) | set(b) if key not in a or key not in b or not _same(a[key], b[key])]

