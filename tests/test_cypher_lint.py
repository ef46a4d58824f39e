"""Neo4j's own linter checks every statement the Neo4j backend can send."""

import os

import pytest

from neoweave.cypher.lint import LintItem, db_schema, lint, linter_available, neo4j_items

pytestmark = pytest.mark.skipif(
    not linter_available() and not os.environ.get("CI"),
    reason="Neo4j's Cypher linter is not installed (npm ci --prefix tools/cypher-lint); CI always runs it",
)


def test_every_neo4j_statement_and_ddl_is_clean():
    items = neo4j_items()
    names = {i.name for i in items}
    assert "vector_search" in names and "ddl:chunk_embedding" in names
    diagnostics = lint(items)
    assert diagnostics == [], "\n".join(map(str, diagnostics))


@pytest.mark.parametrize("text,expected", [
    ("MATCH (a) RETRUN a", "Invalid input 'RETRUN'"),
    ("MATCH (a:Chunk) RETURN b", "Variable `b` not defined"),
    ("MATCH (a:Section)-[:LINKS_TO*1..$d]->(b) RETURN b", "Parameter"),
    ("MATCH (c:Chnk) RETURN c.id", "Label Chnk is not present"),
    ("MATCH (c:Chunk) RETURN c.txt", "txt is not present"),
    ("MATCH (:Section)-[r:LINK_TO]->() RETURN r", "Relationship type LINK_TO is not present"),
    ("CALL apoc.meta.stats() YIELD labels RETURN labels", "Procedure apoc.meta.stats is not present"),
    ("CALL db.index.vector.queryNodes('chunk_embedding', 5, [0.1]) YIELD node, scor RETURN node",
     "Unknown procedure output: `scor`"),
])
def test_a_broken_statement_is_reported(text, expected):
    diagnostics = lint([LintItem("broken", text, {})])
    assert diagnostics, f"linter accepted: {text}"
    assert any(expected in d.message for d in diagnostics), [d.message for d in diagnostics]


def test_schema_for_the_linter_comes_from_graph_schema():
    schema = db_schema()
    assert "Chunk" in schema["labels"] and "__Entity__" in schema["labels"]
    assert "LINKS_TO" in schema["relationshipTypes"] and "context" in schema["propertyKeys"]


def test_declared_row_keys_are_known_and_others_are_not():
    text = ("UNWIND $rows AS row MATCH (s:Section {id: row.source_id}) "
            "MATCH (t:Section {id: row.sourceid}) RETURN s.id, t.id")
    diagnostics = lint([LintItem("rows", text, {"rows": []}, ("source_id",))])
    messages = [d.message for d in diagnostics]
    assert any("sourceid is not present" in m for m in messages), messages
    assert not any("source_id is not present" in m for m in messages), messages
