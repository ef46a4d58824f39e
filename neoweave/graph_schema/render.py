"""Render the schema to DDL for each backend.

Neo4j gets named constraints and indexes with `IF NOT EXISTS` (idempotent by itself). FalkorDB has no
`IF NOT EXISTS`; its steps are applied by the FalkorDB store, which treats "already exists" as success.
Unique constraints in FalkorDB are a server command (`GRAPH.CONSTRAINT CREATE`), not Cypher, so a step
carries either Cypher text or a command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from neoweave.graph_schema.model import SCHEMA, GraphSchema, VectorIndex

Backend = Literal["neo4j", "falkordb"]
BACKENDS: tuple[Backend, ...] = ("neo4j", "falkordb")


@dataclass(frozen=True)
class DdlStep:
    """One idempotent schema step: Cypher to run, or (FalkorDB only) a server command."""

    name: str
    cypher: str = ""
    command: tuple[str | int, ...] = ()


def _check_dimension(dimension: int) -> int:
    if not isinstance(dimension, int) or isinstance(dimension, bool) or not 1 <= dimension <= 8192:
        raise ValueError(f"embedding dimension must be an integer in 1..8192, got {dimension!r}")
    return dimension


def render_ddl(
    backend: Backend,
    dimension: int,
    *,
    schema: GraphSchema = SCHEMA,
    ef_runtime: int = 100,
    ef_construction: int = 200,
    hnsw_m: int = 16,
    graph_name: str = "neoweave",
) -> list[DdlStep]:
    """Every constraint and index of `schema` as backend DDL, in the order they must be applied."""
    dimension = _check_dimension(dimension)
    if backend == "neo4j":
        return _render_neo4j(schema, dimension)
    if backend == "falkordb":
        return _render_falkordb(schema, dimension, ef_runtime, ef_construction, hnsw_m, graph_name)
    raise ValueError(f"unknown backend {backend!r}; expected one of {BACKENDS}")


def _render_neo4j(schema: GraphSchema, dimension: int) -> list[DdlStep]:
    steps: list[DdlStep] = []
    for label in schema.labels:
        name = f"{label.name.lower()}_{label.key}_unique"
        steps.append(DdlStep(name, f"CREATE CONSTRAINT {name} IF NOT EXISTS "
                                   f"FOR (n:{label.name}) REQUIRE n.{label.key} IS UNIQUE"))
        for prop in label.indexed:
            name = f"{label.name.lower()}_{prop}_range"
            steps.append(DdlStep(name, f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label.name}) ON (n.{prop})"))
    for vector in schema.vector_indexes:
        steps.append(DdlStep(
            vector.name,
            f"CREATE VECTOR INDEX {vector.name} IF NOT EXISTS FOR (n:{vector.label}) ON n.{vector.property} "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: {dimension}, "
            f"`vector.similarity_function`: 'cosine'}}}}",
        ))
    for fulltext in schema.fulltext_indexes:
        props = ", ".join(f"n.{p}" for p in fulltext.properties)
        steps.append(DdlStep(
            fulltext.name,
            f"CREATE FULLTEXT INDEX {fulltext.name} IF NOT EXISTS FOR (n:{fulltext.label}) ON EACH [{props}]",
        ))
    return steps


def _render_falkordb(schema: GraphSchema, dimension: int, ef_runtime: int, ef_construction: int, hnsw_m: int,
                     graph_name: str) -> list[DdlStep]:
    for name, value in (("ef_runtime", ef_runtime), ("ef_construction", ef_construction), ("hnsw_m", hnsw_m)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"falkordb.{name} must be a positive integer, got {value!r}")
    steps: list[DdlStep] = []
    for label in schema.labels:
        # FalkorDB requires a range index on the property before a unique constraint can use it.
        steps.append(DdlStep(f"{label.name.lower()}_{label.key}_range",
                             f"CREATE INDEX FOR (n:{label.name}) ON (n.{label.key})"))
        steps.append(DdlStep(
            f"{label.name.lower()}_{label.key}_unique",
            command=("GRAPH.CONSTRAINT", "CREATE", graph_name, "UNIQUE", "NODE", label.name,
                     "PROPERTIES", 1, label.key),
        ))
        for prop in label.indexed:
            steps.append(DdlStep(f"{label.name.lower()}_{prop}_range",
                                 f"CREATE INDEX FOR (n:{label.name}) ON (n.{prop})"))
    for vector in schema.vector_indexes:
        steps.append(DdlStep(
            vector.name,
            f"CREATE VECTOR INDEX FOR (n:{vector.label}) ON (n.{vector.property}) "
            f"OPTIONS {{dimension: {dimension}, similarityFunction: 'cosine', efRuntime: {ef_runtime}, "
            f"efConstruction: {ef_construction}, M: {hnsw_m}}}",
        ))
    for fulltext in schema.fulltext_indexes:
        # one step per property: FalkorDB keeps one full-text index per label and adds a property to it with
        # another CREATE, while a CREATE naming an indexed property fails whole (a graph made before the
        # property joined the index gets it)
        for i, prop in enumerate(fulltext.properties):
            steps.append(DdlStep(fulltext.name if i == 0 else f"{fulltext.name}_{prop}",
                                 f"CREATE FULLTEXT INDEX FOR (n:{fulltext.label}) ON (n.{prop})"))
    return steps


def drop_vector_index_step(backend: Backend, index: VectorIndex) -> DdlStep:
    """DDL that drops one vector index (to change options fixed at creation)."""
    if backend == "neo4j":
        return DdlStep(f"drop_{index.name}", f"DROP INDEX {index.name} IF EXISTS")
    return DdlStep(f"drop_{index.name}", f"DROP VECTOR INDEX FOR (n:{index.label}) ON (n.{index.property})")


def all_neo4j_ddl(dimension: int = 384, schema: GraphSchema = SCHEMA) -> list[DdlStep]:
    """Every DDL statement the Neo4j backend can send (for the Cypher linter)."""
    return [*render_ddl("neo4j", dimension, schema=schema),
            *(drop_vector_index_step("neo4j", v) for v in schema.vector_indexes)]
