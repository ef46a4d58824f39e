"""The graph model (labels, relationships, indexes) as data, and its DDL for each backend."""

from neoweave.graph_schema.model import (
    SCHEMA,
    SCHEMA_VERSION,
    FulltextIndex,
    GraphSchema,
    NodeLabel,
    RelType,
    VectorIndex,
)
from neoweave.graph_schema.render import BACKENDS, Backend, DdlStep, render_ddl

__all__ = [
    "BACKENDS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Backend",
    "DdlStep",
    "FulltextIndex",
    "GraphSchema",
    "NodeLabel",
    "RelType",
    "VectorIndex",
    "render_ddl",
]
