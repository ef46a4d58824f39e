"""What a piece of work reads or writes in the graph, by schema name.

A name is a label or relationship type ("Community", "IN_COMMUNITY": its nodes or edges themselves, created,
deleted or any property changed) or one property of one ("Chunk.main_idea"). A structure derived from the graph
(ppr's walk index) declares what it reads, an enrich step what it writes; where the two do not overlap, the write
cannot change the structure, and the knowledge base keeps it instead of rebuilding it.
"""

from __future__ import annotations

from collections.abc import Iterable

from neoweave.graph_schema.model import SCHEMA, GraphSchema

Footprint = frozenset[str]


def overlaps(writes: Iterable[str], reads: Iterable[str]) -> bool:
    """Whether writing `writes` may change something `reads` covers."""
    reads = set(reads)
    read_kinds = {name.split(".", 1)[0] for name in reads}
    for name in writes:
        kind, _, prop = name.partition(".")
        if (not prop and kind in read_kinds) or (prop and (name in reads or kind in reads)):
            return True
    return False


def check(names: Iterable[str], what: str, schema: GraphSchema = SCHEMA) -> Footprint:
    """The names as a footprint, each a label, relationship type or one of their declared properties; else a
    ValueError naming `what` (a declaration that drifted from the schema would hide a write)."""
    properties = {label.name: {label.key, *label.properties} for label in schema.labels}
    properties.update({rel.name: set(rel.properties) for rel in schema.relationships})
    footprint = frozenset(names)
    for name in footprint:
        kind, _, prop = name.partition(".")
        if kind not in properties or (prop and prop not in properties[kind]):
            raise ValueError(f"{what}: {name!r} is not a label, relationship type or property of the graph schema")
    return footprint
