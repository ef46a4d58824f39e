import re

import pytest

from neoweave.cypher import load
from neoweave.cypher.registry import _code_only, _parse, all_statements
from neoweave.errors import StatementError

MACROS = """// why
// @param k: INTEGER  hits
// @param q: VECTOR  query
WITH {{vector $q}} AS v
{{vector_nodes chunk_embedding $k $q}}
MATCH (node)<-[:HAS_CHUNK]-(s:Section)
RETURN node.id AS id, score, {{cosine node.embedding v}} AS again, v
"""


def test_macros_render_per_backend():
    falkor = _parse("x", "falkordb", MACROS, "x.cypher")
    neo = _parse("x", "neo4j", MACROS, "x.cypher")
    # both search at least VECTOR_SEARCH_BREADTH neighbours (FalkorDB 2k + 50 for its orphans), cut to k with
    # ties broken by the key
    assert ("db.idx.vector.queryNodes('Chunk', 'embedding', CASE WHEN 2 * $k + 50 > 400 THEN 2 * $k + 50 "
            "ELSE 400 END, vecf32($q))") in falkor.text
    assert "ORDER BY round(score * 1000000) DESC, node.id LIMIT $k" in falkor.text
    assert "1 - distance AS score" in falkor.text
    assert "(1 - vec.cosineDistance(node.embedding, v))" in falkor.text
    assert "db.index.vector.queryNodes('chunk_embedding', CASE WHEN $k > 400 THEN $k ELSE 400 END, $q)" in neo.text
    assert "ORDER BY round(score * 1000000) DESC, node.id LIMIT $k" in neo.text
    assert "2 * similarity - 1 AS score" in neo.text
    assert "(2 * vector.similarity.cosine(node.embedding, v) - 1)" in neo.text
    assert "WITH vecf32($q) AS v" in falkor.text and "WITH $q AS v" in neo.text  # a list parameter becomes a vector
    assert falkor.doc == "why"
    assert [p.name for p in neo.params] == ["k", "q"]


def test_cosine_of_a_parameter_is_refused():
    # FalkorDB would convert the parameter list on every row (4x the cost of the cosine itself)
    with pytest.raises(StatementError, match="bind it once"):
        _parse("x", "falkordb", "// @param q: VECTOR\nMATCH (c:Chunk) RETURN {{cosine c.embedding $q}} AS s",
               "x.cypher")


def test_declared_parameters_must_match_the_ones_used():
    with pytest.raises(StatementError, match="do not match"):
        _parse("x", "neo4j", "// @param a: INTEGER\nRETURN $b AS b", "x.cypher")


def test_dollar_inside_a_string_is_not_a_parameter():
    statement = _parse("x", "neo4j", "RETURN '$notaparam' AS s", "x.cypher")
    assert statement.params == ()


def test_unknown_index_in_a_macro_is_an_error():
    with pytest.raises(StatementError, match="unknown vector index"):
        _parse("x", "neo4j", "// @param k: INTEGER\n// @param q: VECTOR\n{{vector_nodes nope $k $q}}\n"
               "RETURN node", "x.cypher")


def test_callers_must_pass_exactly_the_declared_parameters():
    statement = load("meta_get", "falkordb")
    statement.check_params({"id": "meta"})
    with pytest.raises(StatementError, match=r"missing \['id'\]"):
        statement.check_params({})
    with pytest.raises(StatementError, match=r"unexpected \['x'\]"):
        statement.check_params({"id": "meta", "x": 1})


def test_unknown_statement_names_the_known_ones():
    with pytest.raises(StatementError, match="no Cypher statement named 'nope'"):
        load("nope", "neo4j")
    with pytest.raises(StatementError):
        load("await_indexes", "falkordb")  # Neo4j-only


CLAUSE = re.compile(
    r"[()\[\]{}]|\b(ON\s+(?:CREATE|MATCH)\s+SET|SET|DETACH\s+DELETE|DELETE|REMOVE|MERGE|CREATE|WHERE)\b", re.IGNORECASE)


def writes_before_a_filter(text: str) -> bool:
    """A WHERE outside brackets (a filter of rows, not of a list) after a clause that writes."""
    depth, wrote = 0, False
    for match in CLAUSE.finditer(_code_only(text)):
        token = match.group(0)
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
        elif depth == 0 and token.upper() == "WHERE":
            if wrote:
                return True
        elif depth == 0:
            wrote = True
    return False


# Statements that write before a WHERE, each with the test that shows nothing is lost.
WRITE_THEN_FILTER = {
    # DELETE (not SET) of the chunk's mentions, then the entities left without any: the deletes of rows the WHERE
    # drops stay (tests/test_delete_everywhere.py, tests/test_rebuild_check.py compare the graph after deletes)
    "kg_forget_mentions",
}


@pytest.mark.parametrize("backend", ["falkordb", "neo4j"])
def test_no_statement_writes_before_a_filter(backend):
    # FalkorDB drops the SETs of rows that a later WHERE filters out (it lost relation evidence in
    # kg_forget_relations and entity counts in kg_refresh_entities): a write is a statement's last step, or the
    # filter is a statement of its own
    shaped = {statement.name for statement in all_statements(backend) if writes_before_a_filter(statement.text)}
    assert shaped == WRITE_THEN_FILTER


def test_the_shape_check_sees_the_lost_update_shape():
    # kg_forget_relations before 98b9ee0: updates, then keeps only the emptied edges to delete them
    assert writes_before_a_filter("MATCH (a)-[r:RELATED]->(b) SET r.chunk_ids = [c IN r.chunk_ids WHERE c <> $id] "
                                  "WITH r WHERE size(r.chunk_ids) = 0 DELETE r")
    assert not writes_before_a_filter("MATCH (a) WHERE a.x = 1 SET a.y = [v IN a.l WHERE v > 0]")
