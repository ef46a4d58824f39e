"""Full-text search finds the words at line breaks: FalkorDB's tokenizer splits at spaces and tabs only, so a
chunk's text is indexed with its line breaks folded as well (`search_text`)."""

from __future__ import annotations

from conftest import ingest_records

from neoweave.graph_schema.model import SCHEMA_VERSION
from neoweave.query import sparse
from neoweave.store.values import now_iso, search_text

RECORDS = [
    {"id": "poem", "title": "A poem",
     "text": "The quokkafish swims\nzebracorn meadows at dawn\r\nsleep under\u00a0lanterns."},
    {"id": "prose", "title": "Prose", "text": "A zebracorn is not a fish, and\tlanterns burn."},
]


def _df(store, words: str) -> dict[str, int]:
    found = sparse.postings(lambda name, params: store.run(name, params), words, per_term=20)
    return {row["term"]: row["df"] for row in found.rows}


def test_words_at_line_breaks_are_found(falkordb_store, embedder, tmp_path):
    ingest_records(falkordb_store, embedder, tmp_path / "poems.jsonl", RECORDS)
    assert _df(falkordb_store, "swims zebracorn dawn sleep under lanterns") == {
        "swims": 1, "zebracorn": 2, "dawn": 1, "sleep": 1, "under": 1, "lanterns": 2}


def test_search_text_folds_only_what_the_tokenizer_does_not_split():
    assert search_text("a\nb\r\nc\u00a0d\u2028e") == "a b  c d e"
    assert search_text("a b\tc") is None  # nothing to fold: no second copy stored


def _as_schema_2_left_it(store, embedder, tmp_path) -> None:
    """The records in a graph as neoweave's schema 2 wrote them: no search_text, the Meta node at version 2."""
    ingest_records(store, embedder, tmp_path / "poems.jsonl", RECORDS)
    meta = store.read_meta()
    store.write_batches("set_chunk_search_texts", [
        {"id": row["id"], "search_text": None} for row in store.run("chunk_texts_page", {"after": "", "limit": 99})])
    store.run("meta_set", {"id": "meta", "schema_version": 2, "embedding_model": meta["embedding_model"],
                           "dimension": meta["dimension"], "now": now_iso()}, write=True)
    assert _df(store, "swims dawn") == {}


def test_an_older_graph_gets_search_texts_when_its_schema_is_upgraded(falkordb_store, embedder, tmp_path):
    _as_schema_2_left_it(falkordb_store, embedder, tmp_path)
    falkordb_store.upgrade_schema()
    assert _df(falkordb_store, "swims dawn") == {"swims": 1, "dawn": 1}
    assert falkordb_store.read_meta()["schema_version"] == SCHEMA_VERSION


def test_an_export_of_an_older_graph_is_imported_with_search_texts(falkordb_store, second_store, embedder, tmp_path):
    from neoweave.kb.transfer import export_graph, import_graph

    _as_schema_2_left_it(falkordb_store, embedder, tmp_path)
    export_graph(falkordb_store, tmp_path / "export")
    import_graph(second_store, tmp_path / "export")
    assert _df(second_store, "swims dawn") == {"swims": 1, "dawn": 1}
    assert second_store.read_meta()["schema_version"] == SCHEMA_VERSION
