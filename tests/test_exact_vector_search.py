"""Exact vector search (issue 74): a label with at most `exact_search_below` nodes is searched by comparing every
stored vector, which gives the true top k and so the same answer on every copy of the graph (an approximate index
rebuilt in another insertion order can miss a neighbour: docs/benchmarks/same_retrieval.md); a larger one by its
index. Real store, model and files."""

from __future__ import annotations

import re

import numpy as np
from conftest import stdlib_corpus

from neoweave.cypher.registry import all_statements, load
from neoweave.graph_schema.render import BACKENDS
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

QUESTIONS = ("How are threads started?", "What does the json module decode?", "How is a socket closed?",
             "Which codec handles base64?", "How do I read a zip archive?")


def test_every_label_a_vector_search_reads_is_counted_and_bulk_searches_use_the_index():
    for backend in BACKENDS:
        counted = set(re.findall(r"'(\w+)' AS label", load("vector_label_sizes", backend).text))
        searching = [s for s in all_statements(backend) if s.exact_text is not None]
        assert {"chunk_vector_search", "kg_entity_vector_search", "kg_link_entities"} <= {s.name for s in searching}
        for statement in searching:
            assert statement.vector_labels and set(statement.vector_labels) <= counted, statement.name
            assert "vector.queryNodes" not in statement.exact_text  # FalkorDB; Neo4j: db.index.vector
            assert "index.vector.queryNodes" not in statement.exact_text and "vector.queryNodes" in statement.text
        assert load("rst_similar_chunks", backend).exact_text is None  # one search per paragraph of a step


def test_a_small_label_is_searched_exactly_and_a_large_one_by_its_index(falkordb_store, embedder, tmp_path):
    store = falkordb_store
    path = tmp_path / "corpus.jsonl"
    path.write_text(stdlib_corpus(40), encoding="utf-8")
    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(path)
    rows = store.query("MATCH (c:Chunk) RETURN c.id AS id, c.embedding AS embedding ORDER BY id")
    ids = [row["id"] for row in rows]
    vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
    sent: list[str] = []
    execute = store._execute

    def recording(cypher, params, **kwargs):
        sent.append(cypher)
        return execute(cypher, params, **kwargs)

    store._execute = recording
    statement = store.statement("chunk_vector_search")
    for threshold, text in ((len(ids), statement.exact_text), (len(ids) - 1, statement.text), (0, statement.text)):
        store.exact_search_below = threshold
        for question in QUESTIONS:
            query = np.asarray(embedder.embed([question])[0], dtype=np.float32)
            found = store.run("chunk_vector_search", {"k": 5, "embedding": query.tolist()})
            assert sent[-1] == text
            scores = vectors @ query
            best = np.sort(scores)[::-1][:5]
            got = np.asarray([scores[ids.index(row["chunk_id"])] for row in found])
            assert len(found) == 5 and np.all(got >= best[-1] - 1e-5), (question, threshold)
            assert np.allclose([row["score"] for row in found], got, atol=1e-5)
            assert [row["score"] for row in found] == sorted((row["score"] for row in found), reverse=True)
