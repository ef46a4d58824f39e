"""kg cuts a tie between an entity's relations the same way over the walk index and over the store: the statement
ranks by the score rounded to 1e-6, then the other end's id, the start's id and the type. A graph with a saved walk
index and its imported copy (which reads the store) give the same facts and chunks (issue 74)."""

from __future__ import annotations

import math

import pytest
from conftest import ingest_records

from neoweave.enrich import run
from neoweave.nlp.names import normalize
from neoweave.query import strategy
from neoweave.query.walk_index import WalkIndexes
from neoweave.query.walk_relations import relation_candidates
from tests.test_query_kg import RECORDS

CENTER, AMBER, DAWN, IVY = "person:zorvath quill", "person:zorvath amber", "person:zorvath dawn", "person:zorvath ivy"
QUESTION = "Who is Zorvath Quill?"


@pytest.fixture
def tied(falkordb_store, embedder, tmp_path):
    """The enriched corpus, and an entity whose three relations tie once rounded. Its neighbours have no vector,
    so both paths score them by weight alone: amber and ivy exactly alike, dawn 2e-7 above them. The index held
    its edges by start (ivy's relation first: its start sorts before the centre) and its scores unrounded (dawn
    first), the statement ranks amber, dawn, ivy."""
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "kg.jsonl", RECORDS)
    run("kg", store, embedder=embedder, progress=False)
    chunks = [row["id"] for row in store.query("MATCH (c:Chunk) RETURN c.id AS id ORDER BY id")]
    store.query("UNWIND $rows AS row CREATE (e:Entity:__Entity__ {id: row.id, name: row.name, key: row.key, "
                "type: 'person', mention_count: 1, aliases_text: ''})",
                {"rows": [{"id": key, "name": key.split(":")[1].title(), "key": normalize(key.split(":")[1])}
                          for key in (CENTER, AMBER, DAWN, IVY)]}, write=True)
    store.query("MATCH (e:Entity {id: $id}) SET e.embedding = vecf32($v)",
                {"id": CENTER, "v": embedder.embed(["Zorvath Quill"])[0]}, write=True)
    near = 6 * math.exp(4e-6) - 1  # 0.05 * ln(1 + near) = 0.05 * ln(6) + 2e-7
    store.query("UNWIND $rows AS row MATCH (a:Entity {id: row[0]}), (b:Entity {id: row[1]}) "
                "CREATE (a)-[:RELATED {type: 'co_occurs', weight: row[2], chunk_ids: row[3]}]->(b)",
                {"rows": [[CENTER, AMBER, 5.0, chunks[:2]], [IVY, CENTER, 5.0, chunks[1:]],
                          [CENTER, DAWN, near, chunks[2:] + chunks[:1]]]}, write=True)
    assert WalkIndexes.of(store).current(build=True) is not None
    return store


def test_the_index_cuts_a_rounded_tie_between_relations_as_the_statement(tied, embedder):
    index = WalkIndexes.of(tied).current()
    embedding = embedder.embed_query(QUESTION)
    params = {"entity_ids": [CENTER], "embedding": embedding, "weight_factor": 0.05, "max_chunks": 3,
              "max_degree": 500, "min_score": -1e9}
    every = tied.run("kg_entity_relations", {**params, "per_entity": 10})
    assert [row["other_id"] for row in every] == [AMBER, DAWN, IVY]
    assert len({round(row["score"] * 1e6) for row in every}) == 1 and len({row["score"] for row in every}) == 2
    for per_entity in (1, 2, 3):
        for min_score in (-1e9, every[0]["score"] + 1e-7):  # dawn alone passes: left out before the cut
            statement = tied.run("kg_entity_relations", {**params, "per_entity": per_entity, "min_score": min_score})
            over_index = relation_candidates(index, [CENTER], embedding, per_entity=per_entity, weight_factor=0.05,
                                             max_degree=500, min_score=min_score)
            assert [(r["other_id"], r["source_id"], r["type"]) for r in over_index] == \
                [(r["other_id"], r["source_id"], r["type"]) for r in statement], (per_entity, min_score)
            assert [r["score"] for r in over_index] == pytest.approx([r["score"] for r in statement], abs=1e-9)


@pytest.mark.parametrize("per_entity", [1, 2])
def test_kg_keeps_the_same_facts_and_chunks_over_the_index_and_the_store(tied, embedder, per_entity):
    results = [strategy("kg", tied, embedder, k=1, per_entity=per_entity, walk_index=walk_index).retrieve(QUESTION)
               for walk_index in ("store", "auto")]
    assert [result.parameters["relations_over"] for result in results] == ["store", "walk index"]
    over_store, over_index = results
    expected = {1: [AMBER], 2: [AMBER, DAWN]}[per_entity]  # facts too rank a rounded tie by id
    assert [f.target_id for f in over_store.facts if f.source_id == CENTER] == expected
    assert [(f.source_id, f.target_id, f.relation, f.hop, f.chunk_ids) for f in over_index.facts] == \
        [(f.source_id, f.target_id, f.relation, f.hop, f.chunk_ids) for f in over_store.facts]
    assert [f.score for f in over_index.facts] == pytest.approx([f.score for f in over_store.facts], abs=1e-9)
    assert [item.chunk_id for item in over_index.items] == [item.chunk_id for item in over_store.items]
    assert any(item.origin == "fact" for item in over_index.items)
