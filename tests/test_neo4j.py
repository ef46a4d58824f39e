"""The same contract on a live Neo4j; runs when NEOWEAVE_NEO4J_URI is set (see docker/)."""

import math
import uuid

import pytest

from neoweave.cypher import statement_names
from neoweave.errors import ReadOnlyViolation

pytestmark = pytest.mark.neo4j
DIM = 4


def _unit(vector):
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def test_schema_meta_search_and_read_only(neo4j_store):
    store = neo4j_store
    meta = store.read_meta()
    if meta is not None and (meta["embedding_model"], meta["dimension"]) != ("test-model", DIM):
        pytest.skip("the Neo4j database holds another graph; point NEOWEAVE_NEO4J_URI at an empty one")
    store.apply_schema("test-model", DIM)
    assert store.apply_schema("test-model", DIM) == []
    run = uuid.uuid4().hex[:8]
    rows = [{"id": f"{run}-{i}", "doc_id": run, "text": text, "embedding": _unit(vec)}
            for i, (text, vec) in enumerate([("asyncio event loop", [1, 0, 0, 0]),
                                              ("garbage collector", [0.8, 0.6, 0, 0]),
                                              ("regular expressions", [0, 0, 1, 0])])]
    store.query("UNWIND $rows AS row MERGE (c:Chunk {id: row.id}) SET c += row", {"rows": rows}, write=True)
    try:
        store.run("await_indexes", write=True)
        hits = store.vector_search("chunk_embedding", _unit([1, 0, 0, 0]), 3, filter={"doc_id": run})
        assert [h.id for h in hits] == [f"{run}-0", f"{run}-1", f"{run}-2"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-4) and hits[1].score == pytest.approx(0.8, abs=1e-4)
        text_hits = store.fulltext_search("chunk_text", "asyncio", 10)
        assert f"{run}-0" in {h.id for h in text_hits}
        with pytest.raises(ReadOnlyViolation):
            store._execute("MATCH (c:Chunk {id: $id}) SET c.x = 1", {"id": f"{run}-0"}, write=False)
        assert {"meta_get", "vector_search", "await_indexes"} <= set(statement_names("neo4j"))
        assert store.counts().nodes["Chunk"] >= 3
        assert store.health()["ok"]
    finally:
        store.query("MATCH (c:Chunk {doc_id: $run}) DETACH DELETE c", {"run": run}, write=True)
