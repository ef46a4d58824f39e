import re

import pytest

from neoweave.cypher import all_statements, statement_names
from neoweave.graph_schema import SCHEMA, render_ddl
from neoweave.graph_schema.model import GraphSchema, NodeLabel, RelType


def test_schema_declares_the_platform_model():
    labels = {label.name for label in SCHEMA.labels}
    assert {"Document", "Section", "Chunk", "Entity", "Community", "Tag", "Meta"} <= labels
    assert "__Entity__" in SCHEMA.all_label_names
    rels = set(SCHEMA.relationship_names)
    assert {"HAS_SECTION", "HAS_CHUNK", "NEXT_CHUNK", "LINKS_TO", "MENTIONS", "RELATED", "RST",
            "IN_COMMUNITY", "PARENT_COMMUNITY", "TAGGED"} <= rels
    links = next(r for r in SCHEMA.relationships if r.name == "LINKS_TO")
    assert {"context", "anchor", "url"} <= set(links.properties)
    related = next(r for r in SCHEMA.relationships if r.name == "RELATED")
    assert {"type", "description", "weight"} <= set(related.properties)
    rst = next(r for r in SCHEMA.relationships if r.name == "RST")
    assert {"relation", "weight", "reason"} <= set(rst.properties)
    assert {(v.label, v.property) for v in SCHEMA.vector_indexes} >= {
        ("Chunk", "embedding"), ("Entity", "embedding"), ("Community", "embedding")}
    assert {(f.label, f.properties) for f in SCHEMA.fulltext_indexes} >= {
        ("Chunk", ("text", "search_text")), ("Entity", ("name", "aliases_text"))}  # names and aliases


def test_schema_rejects_relationship_to_unknown_label():
    with pytest.raises(ValueError, match="unknown label Nope"):
        GraphSchema(1, (NodeLabel("A", "id", ()),), (RelType("R", "A", "Nope"),), (), ())


@pytest.mark.parametrize("backend", ["neo4j", "falkordb"])
def test_ddl_has_a_unique_key_for_every_label_and_the_dimension(backend):
    steps = render_ddl(backend, 384)
    text = "\n".join(s.cypher for s in steps) + "\n".join(" ".join(map(str, s.command)) for s in steps)
    for label in SCHEMA.labels:
        if backend == "neo4j":
            assert f"FOR (n:{label.name}) REQUIRE n.{label.key} IS UNIQUE" in text
        else:
            assert f"UNIQUE NODE {label.name} PROPERTIES 1 {label.key}" in text
    vector_steps = [s for s in steps if s.name.endswith("_embedding")]
    assert len(vector_steps) == len(SCHEMA.vector_indexes)
    assert all("384" in s.cypher and "cosine" in s.cypher for s in vector_steps)
    names = [s.name for s in steps]
    assert len(names) == len(set(names)), "DDL step (index) names must be unique"


@pytest.mark.parametrize("option", ["ef_runtime", "ef_construction", "hnsw_m"])
@pytest.mark.parametrize("value", [0, -1, "200", True])
def test_falkordb_ddl_rejects_a_bad_hnsw_option(option, value):
    with pytest.raises(ValueError, match=f"falkordb.{option}"):
        render_ddl("falkordb", 384, **{option: value})


@pytest.mark.parametrize("dimension", [0, -3, 10_000, "384", True])
def test_ddl_rejects_a_bad_dimension(dimension):
    with pytest.raises(ValueError, match="dimension"):
        render_ddl("neo4j", dimension)


_LABEL_USE = re.compile(r"\(\s*\w*\s*:\s*(\w+)")
_TYPE_USE = re.compile(r"\[\s*\w*\s*:\s*(\w+)")


@pytest.mark.parametrize("backend", ["neo4j", "falkordb"])
def test_statements_use_only_schema_labels_and_types(backend):
    labels = set(SCHEMA.all_label_names)
    types = set(SCHEMA.relationship_names)
    assert statement_names(backend)
    for statement in all_statements(backend):
        assert set(_LABEL_USE.findall(statement.text)) <= labels, statement.source
        assert set(_TYPE_USE.findall(statement.text)) <= types, statement.source
