"""Ingest end to end: real files, the real embedding model, a real FalkorDB graph."""

from pathlib import Path

import pytest

from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.ingest.writer import GraphWriter


def _ingestor(store, embedder, **options):
    sources = {k: options.pop(k) for k in list(options) if k in SourceOptions.__dataclass_fields__}
    return Ingestor(store, embedder, IngestOptions(sources=SourceOptions(**sources), progress=False, **options))


def _one(store, query, **params):
    rows = store.query(query, params)
    return rows[0] if rows else None


def _links(store):
    rows = store.query("MATCH (a:Section)-[l:LINKS_TO]->(b:Section) "
                       "RETURN a.anchor AS source, b.anchor AS target, l.text AS text, l.context AS context")
    return {(r["source"], r["target"]): r for r in rows}


def _invariants(store):
    """No orphans: every chunk in a section, every section in a document, reading order intact."""
    assert _one(store, "MATCH (c:Chunk) WHERE NOT ()-[:HAS_CHUNK]->(c) RETURN count(c) AS n")["n"] == 0
    assert _one(store, "MATCH (s:Section) WHERE NOT ()-[:HAS_SECTION]->(s) RETURN count(s) AS n")["n"] == 0
    assert _one(store, "MATCH (c:Chunk)-[:NEXT_CHUNK]->(n:Chunk) WHERE c.doc_id <> n.doc_id "
                       "RETURN count(c) AS n")["n"] == 0
    duplicates = store.query("MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN id")
    assert duplicates == []


def test_site_becomes_a_linked_section_graph(falkordb_store, embedder, site):
    report = _ingestor(falkordb_store, embedder).ingest(site)
    assert (report.documents_new, report.documents_changed, report.documents_unchanged) == (3, 0, 0)
    assert report.skipped == [] and report.files_ignored == 2
    counts = falkordb_store.counts()
    assert counts.nodes["Document"] == 3 and counts.nodes["Section"] == 6
    assert counts.nodes["Chunk"] == report.chunks >= 6
    assert counts.relationships["HAS_SECTION"] == 6 and counts.relationships["HAS_CHUNK"] == report.chunks
    links = _links(falkordb_store)
    # anchor links land on the section holding the anchor; a page link on the page's first section
    assert ("event-loop", "garbage-collection") in links
    assert ("garbage-collection", "event-loop") in links  # a link loop is just two edges
    assert ("tiny-docs", "async-guide") in links and ("tiny-docs", "garbage-collection") in links
    assert ("event-loop", "event-loop") not in links  # self links are not edges
    assert links[("event-loop", "garbage-collection")]["context"].startswith("run function below")
    # the inner anchor #run-function is in the same section: a self link, not an edge
    assert report.self_links == 2
    # unresolved links are counted and kept as data on their section
    assert report.links_unresolved == 2 and report.links_resolved == 4
    missing = _one(falkordb_store, "MATCH (s:Section {anchor: 'missing-targets'}) "
                                   "RETURN s.unresolved_links_json AS u")["u"]
    assert "nowhere.html" in missing and "no-such-anchor" in missing
    # external links are data on the chunk that holds them
    external = _one(falkordb_store, "MATCH (c:Chunk) WHERE c.external_links_json IS NOT NULL "
                                    "RETURN c.external_links_json AS e")
    assert "https://example.org/tiny" in external["e"]
    # provenance
    doc = _one(falkordb_store, "MATCH (d:Document {title: 'Async guide'}) RETURN d.path AS path, d.url AS url")
    assert doc["path"] == str(site / "guide" / "async.html") and doc["url"].startswith("file://")
    # searchable right away
    hits = falkordb_store.vector_search("chunk_embedding", embedder.embed_query("cyclic garbage collector"), 1)
    assert hits[0].properties["section_id"].endswith("#garbage-collection")
    assert falkordb_store.fulltext_search("chunk_text", "coroutines", 3)
    _invariants(falkordb_store)


def test_reingest_is_a_no_op_and_a_change_replaces_one_document(falkordb_store, embedder, site):
    ingestor = _ingestor(falkordb_store, embedder)
    ingestor.ingest(site)
    before = falkordb_store.counts()
    again = ingestor.ingest(site)
    assert (again.documents_new, again.documents_changed, again.documents_unchanged) == (0, 0, 3)
    assert again.chunks == 0 and falkordb_store.counts() == before

    # memory.html changes: its text is replaced, the incoming link to #garbage-collection survives
    memory = site / "guide" / "memory.html"
    memory.write_text(memory.read_text().replace("reference counting.", "reference counting and arenas."))
    changed = ingestor.ingest(site)
    assert (changed.documents_new, changed.documents_changed, changed.documents_unchanged) == (0, 1, 2)
    assert falkordb_store.counts() == before
    assert "arenas" in _one(falkordb_store, "MATCH (c:Chunk) WHERE c.text CONTAINS 'arenas' RETURN c.text AS t")["t"]
    assert ("event-loop", "garbage-collection") in _links(falkordb_store)

    # the garbage-collection section disappears: the link to it becomes unresolved, not dangling
    text = memory.read_text()
    start, end = text.index('<section id="garbage-collection">'), text.index("</section>") + len("</section>")
    memory.write_text(text[:start] + text[end:])
    removed = ingestor.ingest(site)
    assert removed.documents_changed == 1
    links = _links(falkordb_store)
    assert not any(target == "garbage-collection" for _, target in links)
    unresolved = _one(falkordb_store, "MATCH (s:Section {anchor: 'event-loop'}) RETURN s.unresolved_links_json AS u")
    assert "memory.html#garbage-collection" in unresolved["u"]
    _invariants(falkordb_store)

    # and when it comes back, the other document's link is re-resolved
    memory.write_text(text)
    ingestor.ingest(site)
    assert ("event-loop", "garbage-collection") in _links(falkordb_store)


def test_a_new_document_resolves_links_made_earlier(falkordb_store, embedder, site):
    (site / "guide" / "memory.html").rename(site / "memory.html.bak")
    first = _ingestor(falkordb_store, embedder).ingest(site)
    assert first.links_unresolved == 4
    (site / "memory.html.bak").rename(site / "guide" / "memory.html")
    _ingestor(falkordb_store, embedder).ingest(site)
    assert ("event-loop", "garbage-collection") in _links(falkordb_store)
    assert ("tiny-docs", "garbage-collection") in _links(falkordb_store)


def test_delete_by_id_and_by_path(falkordb_store, embedder, site):
    _ingestor(falkordb_store, embedder).ingest(site)
    writer = GraphWriter(falkordb_store)
    memory = str(site / "guide" / "memory.html")
    found = writer.find_documents(memory, memory + "/")
    assert len(found) == 1
    writer.delete_documents([found[0]["id"]])
    counts = falkordb_store.counts()
    assert counts.nodes["Document"] == 2
    query = "MATCH (s:Section) WHERE s.doc_id ENDS WITH 'memory.html' RETURN count(s) AS n"
    assert _one(falkordb_store, query)["n"] == 0
    assert _one(falkordb_store, "MATCH (d:Document {title: 'Async guide'}) RETURN d.links_unresolved AS n")["n"] == 3
    folder = str(site / "guide")
    ids = [row["id"] for row in writer.find_documents(folder, folder + "/")]
    assert len(ids) == 1
    writer.delete_documents(ids)
    assert falkordb_store.counts().nodes["Document"] == 1
    _invariants(falkordb_store)


def test_records_with_metadata(falkordb_store, embedder, tmp_path):
    corpus = tmp_path / "news.jsonl"
    corpus.write_text(
        '{"title": "Markets rally", "author": "A. Writer", "source": "Wire", "category": "business", '
        '"published_at": "2023-10-01T00:00:00+00:00", "url": "https://news.example/m", "body": "Stocks rose today."}\n'
        '{"id": "q1", "title": "Quiet day", "text": "Nothing happened.", "metadata": {"tags": ["calm"]}}\n')
    report = _ingestor(falkordb_store, embedder).ingest(corpus)
    assert report.documents_new == 2 and report.skipped == []
    article = _one(falkordb_store, "MATCH (d:Document {id: 'https://news.example/m'}) "
                                   "RETURN d.author AS author, d.category AS category, d.published_at AS p, "
                                   "d.path AS path")
    assert article == {"author": "A. Writer", "category": "business", "p": "2023-10-01T00:00:00+00:00",
                       "path": str(corpus)}
    quiet = _one(falkordb_store, "MATCH (d:Document {id: 'q1'}) RETURN d.metadata_json AS m")
    assert quiet["m"] == '{"tags": ["calm"]}'


def test_another_embedding_model_is_refused_before_any_write(falkordb_store, embedder, site):
    falkordb_store.apply_schema("some-other-model", embedder.dimension)
    from neoweave.errors import SchemaMismatch

    with pytest.raises(SchemaMismatch):
        _ingestor(falkordb_store, embedder).ingest(site)
    assert "Document" not in falkordb_store.counts().nodes


def test_the_int8_variant_does_not_extend_a_float32_graph(falkordb_store, embedder, site):
    """Its vectors are close to float32's but not the same: the graph records which one built it."""
    from neoweave.embeddings import Embedder
    from neoweave.errors import SchemaMismatch

    falkordb_store.apply_schema(embedder.model_name, embedder.dimension)
    with pytest.raises(SchemaMismatch, match=f"'{embedder.model_name}:int8'"):
        _ingestor(falkordb_store, Embedder(f"{embedder.model_name}:int8")).ingest(site)
    assert "Document" not in falkordb_store.counts().nodes


def test_token_counts_are_the_models_own_and_never_truncated(embedder):
    # chunk and fact token counts (context budgets) come from the Rust tokenizer without the transformers
    # wrapper: the counts must stay those of the model's tokenizer, special tokens included, untruncated
    texts = ["", "short", "word " * 700, "Ünïcödé 日本語 os.path.join()", "a\x00b", "Edvard Munch painted The Scream."]
    tokenizer = embedder._load().tokenizer
    expected = [len(ids) for ids in tokenizer(texts, add_special_tokens=True, truncation=False,
                                              verbose=False)["input_ids"]]
    assert embedder.count_tokens(texts) == expected
    assert expected[2] > 700 and expected[0] == 2
    assert embedder.token_counter()(texts[:2]) == expected[:2]


def test_word_by_word_token_counts_equal_the_tokenizers_on_real_text(embedder):
    # the counter sums memoised word counts for printable ASCII (BERT splits on whitespace and punctuation
    # first); every count must equal the tokenizer's, on prose, code and markup, and on the texts it leaves
    # to the tokenizer (accents, control characters, special tokens written out, words over 100 characters)
    root = Path(__file__).resolve().parents[1]
    sources = [root / "README.md", root / "ARCHITECTURE.md", root / "docs" / "evaluation.md",
               root / "docs" / "enrich" / "kg.md", root / "docs" / "enrich" / "tags.md",
               root / "docs" / "enrich" / "rst.md", root / "neoweave" / "query" / "kg.py",
               root / "tests" / "data" / "resolution" / "corpus.jsonl", root / "tests" / "data" / "site" / "index.html"]
    texts = [block for source in sources for block in source.read_text(encoding="utf-8").split("\n\n") if block]
    texts += ["Say [SEP] or [unk] here", "x" * 150 + " y", "tab\tand\r\nnew\x0bline", "C++ & e-mail: a_b@c.d`~",
              "Café déjà vu", "naïve " * 3, "", "   ", "non\u00a0breaking\u2009thin space", "unit\x1fsep\x1f",
              "a\x1fb x\x1cy", "e\u0301 combining", "日本語のテキスト and English", "dash—and “quotes” …",
              "  lead and trail  ", "長い日本語の文章" * 20 + " end", "é" * 70 + " naïve"]
    tokenizer = embedder._load().tokenizer
    expected = [len(ids) for ids in tokenizer(texts, add_special_tokens=True, truncation=False,
                                              verbose=False)["input_ids"]]
    counter = embedder.token_counter()
    assert len(texts) > 200
    assert counter(texts) == expected
    assert counter(texts[::-1]) == expected[::-1]  # memoised words count the same the second time
