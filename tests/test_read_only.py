"""Hardening: a read-only query refuses every way of writing (on the real FalkorDB; Neo4j refuses the same in
a read transaction, tests/test_neo4j.py), and no Cypher in the package is built from strings at run time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from neoweave.errors import NeoweaveError

HOSTILE = [
    "CREATE (:Tag {name: 'x'})",
    "cReAtE (:Tag {name: 'x'})",
    "MERGE (:Tag {name: 'x'})",
    "MATCH (m:Meta) DETACH DELETE m",
    "MATCH (m:Meta) DELETE m",
    "MATCH (m:Meta) SET m.schema_version = 0",
    "MATCH (m:Meta) REMOVE m.schema_version",
    "MATCH (m:Meta) SET m:Hacked",
    "CREATE INDEX FOR (t:Tag) ON (t.created_at)",
    "DROP INDEX ON :Chunk(doc_id)",
    "CALL db.idx.fulltext.createNodeIndex('Meta', 'id')",
    "CALL db.idx.fulltext.drop('Chunk')",
    "MATCH (m:Meta) RETURN m; CREATE (:Tag {name: 'x'})",
    "MATCH (m:Meta) /* nothing to see */ CREATE (:Tag {name: 'x'})",
    "// a comment\nCREATE (:Tag {name: 'x'})",
    "MATCH (m:Meta) WITH m CREATE (:Tag {name: m.id})",
    "UNWIND [1] AS x MERGE (:Tag {name: toString(x)})",
    "MATCH (m:Meta) FOREACH (i IN [1] | CREATE (:Tag {name: 'x'}))",
]


@pytest.fixture
def initialised(falkordb_store):
    falkordb_store.apply_schema("all-MiniLM-L6-v2", 384)
    return falkordb_store


@pytest.mark.parametrize("cypher", HOSTILE)
def test_read_only_queries_refuse_every_write(initialised, cypher):
    before = (initialised.counts(), sorted(str(i) for i in initialised.indexes()), initialised.read_meta())
    with pytest.raises(NeoweaveError):
        initialised.query(cypher)
    after = (initialised.counts(), sorted(str(i) for i in initialised.indexes()), initialised.read_meta())
    assert after == before


def test_reads_that_mention_write_words_in_strings_still_run(initialised):
    rows = initialised.query("MATCH (m:Meta) WHERE m.id <> 'CREATE (x)' RETURN 'DELETE me' AS text, count(m) AS n")
    assert rows == [{"text": "DELETE me", "n": 1}]


def _calls_with_built_cypher(tree: ast.AST) -> list[int]:
    """Lines where a query / statement call receives Cypher built at run time (f-string, +, %, .format)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or not node.args:
            continue
        if node.func.attr not in ("query", "ro_query", "_execute", "run_cypher", "execute_query"):
            continue
        first = node.args[0]
        built = isinstance(first, ast.JoinedStr | ast.BinOp) or (
            isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr == "format")
        if built:
            lines.append(node.lineno)
    return lines


def test_no_cypher_is_built_from_strings_at_run_time():
    package = Path(__file__).parents[1] / "neoweave"
    offenders = {}
    for path in package.rglob("*.py"):
        lines = _calls_with_built_cypher(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            offenders[str(path.relative_to(package))] = lines
    assert offenders == {}
    assert _calls_with_built_cypher(ast.parse("store.query(f'MATCH (n {{id: {x}}}) RETURN n')")) == [1]
    assert _calls_with_built_cypher(ast.parse("store.query('MATCH (n) RETURN n', {'x': x})")) == []


HOSTILE_VALUES = ['x"}) CREATE (:Tag {name: "pwn"}) //', "x'}) CREATE (:Tag {name: 'pwn'}) //", "\\", "\\\"",
                  "line\nbreak", "nul\x00byte", "ünïcødé 事件 🚀", "`backtick`", "$param", "*/ CREATE (:Tag) /*"]


def test_parameter_values_travel_as_data_never_as_cypher(initialised):
    for value in HOSTILE_VALUES:
        assert initialised.query("MATCH (m:Meta) WHERE m.id = $x RETURN m.id AS id", {"x": value}) == []
        written = initialised.query("MERGE (t:Tag {name: $x}) RETURN t.name AS name", {"x": value}, write=True)
        assert written[0]["name"] == value.replace("\x00", "")  # FalkorDB strings cannot hold NUL: dropped
    names = {row["name"] for row in initialised.query("MATCH (t:Tag) RETURN t.name AS name")}
    assert len(names) == len(HOSTILE_VALUES) and "pwn" not in names  # one node per value, no injected node
