"""LangChain: documents from a real langchain-community loader ingested into the real store; a neoweave strategy
as a LangChain retriever inside a runnable chain, its trace in the documents' metadata."""

from __future__ import annotations

import os

import pytest

if not os.environ.get("CI"):  # CI installs every extra: there a missing one is a failure
    pytest.importorskip("langchain_community", reason="the langchain extra is not installed")

from langchain_community.document_loaders import DirectoryLoader, TextLoader
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from neoweave.integrations.langchain import NeoweaveRetriever, document_records, ingest_documents

NOTES = {
    "loop.txt": "The event loop runs asynchronous tasks and callbacks. It schedules coroutines when they are ready.",
    "gc.txt": "The cyclic garbage collector finds reference cycles and frees the memory they hold.",
    "paint.txt": "Edvard Munch painted The Scream in 1893, an icon of modern art.",
}


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_loader_is_an_ingest_source_and_reingest_skips_unchanged(falkordb_store, kb, notes):
    loader = DirectoryLoader(str(notes), glob="*.txt", loader_cls=TextLoader)
    report = ingest_documents(loader.lazy_load(), kb=kb)
    assert report.documents_new == 3 and report.chunks == 3 and not report.skipped
    rows = falkordb_store.query("MATCH (d:Document) RETURN d.id AS id, d.title AS title ORDER BY id")
    assert [row["title"] for row in rows] == ["gc.txt", "loop.txt", "paint.txt"]
    assert all(row["id"] == str(notes / row["title"]) for row in rows)  # the loader's source: stable
    again = ingest_documents(loader.lazy_load(), kb=kb)
    assert again.documents_unchanged == 3 and again.documents_new == 0


def test_records_keep_ids_stable_and_distinct():
    records = list(document_records([
        Document(page_content="a", metadata={"source": "report.pdf", "page": 0}),
        Document(page_content="b", metadata={"source": "report.pdf", "page": 1}),
        Document(page_content="c", metadata={"source": "split.md"}),
        Document(page_content="d", metadata={"source": "split.md"}),
        Document(page_content="e", metadata={"source": "https://example.org/x"}),
        Document(page_content="f", id="mine"),
        Document(page_content="g"),
    ]))
    assert [r["id"] for r in records[:6]] == ["report.pdf#page=0", "report.pdf#page=1", "split.md", "split.md#1",
                                              "https://example.org/x", "mine"]
    assert records[4]["url"] == "https://example.org/x" and records[6]["id"].startswith("lc-")
    assert records[0]["metadata"] == {"source": "report.pdf", "page": 0}


def test_retriever_returns_ranked_documents_with_the_trace(falkordb_store, kb, notes):
    ingest_documents(DirectoryLoader(str(notes), glob="*.txt", loader_cls=TextLoader).lazy_load(),
                     kb=kb)
    retriever = NeoweaveRetriever(kb=kb, strategy="naive", parameters={"k": 2})
    docs = retriever.invoke("How does the garbage collector free memory?")
    assert len(docs) == 2 and docs[0].metadata["doc_id"].endswith("gc.txt")
    assert [d.metadata["rank"] for d in docs] == [1, 2] and docs[0].metadata["score"] >= docs[1].metadata["score"]
    trace = docs[0].metadata["neoweave"]["trace"]
    assert trace["statements"] == ["chunk_vector_search"] and docs[0].id in trace["nodes"]
    chain = retriever | RunnableLambda(lambda found: "\n".join(d.page_content for d in found))
    assert "cyclic garbage collector" in chain.invoke("How does the garbage collector free memory?")


def _graph_documents():
    from langchain_community.graphs.graph_document import GraphDocument, Node, Relationship

    curie = Node(id="Marie Curie", type="Person", properties={"description": "physicist and chemist"})
    sorbonne = Node(id="University of Paris", type="Organization")
    radium = Node(id="radium", type="Concept")
    pierre = Node(id="Pierre Curie", type="Person")
    first = Document(page_content="Marie Curie taught at the University of Paris. She discovered radium with "
                                  "Pierre Curie in 1898.", metadata={"source": "curie.txt"})
    second = Document(page_content="Pierre Curie studied crystals and magnetism.", metadata={"source": "pierre.txt"})
    return [
        GraphDocument(nodes=[curie, sorbonne, radium, pierre], source=first, relationships=[
            Relationship(source=curie, target=sorbonne, type="WORKED_AT"),
            Relationship(source=curie, target=radium, type="DISCOVERED", properties={"description": "in 1898"}),
            Relationship(source=curie, target=pierre, type="MARRIED_TO")]),
        GraphDocument(nodes=[pierre], relationships=[], source=second),
    ]


def test_graph_documents_import_as_entities_relations_and_mentions(falkordb_store, embedder, kb):
    from neoweave.integrations.langchain import import_graph_documents
    from neoweave.query import strategy

    ingested, report = import_graph_documents(_graph_documents(), kb=kb)
    assert ingested.documents_new == 2 and report.chunks == 2
    rows = falkordb_store.query("MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) RETURN c.doc_id AS doc, e.name AS name, "
                                "e.type AS type ORDER BY doc, name")
    mentioned = {(row["doc"], row["name"]) for row in rows}
    assert {("curie.txt", "Marie Curie"), ("curie.txt", "radium"), ("curie.txt", "Pierre Curie"),
            ("pierre.txt", "Pierre Curie")} <= mentioned
    assert {row["type"] for row in rows if row["name"] == "Marie Curie"} == {"person"}
    relations = falkordb_store.query("MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.name AS a, r.type AS type, "
                                     "r.description AS description, b.name AS b ORDER BY type")
    assert [(r["a"], r["type"], r["b"]) for r in relations] == [
        ("Marie Curie", "discovered", "radium"), ("Marie Curie", "married_to", "Pierre Curie"),
        ("Marie Curie", "worked_at", "University of Paris")]
    assert relations[0]["description"] == "in 1898"
    found = strategy("kg", falkordb_store, embedder, k=1).retrieve("What did Marie Curie discover?")
    assert any(fact.relation == "discovered" for fact in found.facts)
    counts = (falkordb_store.counts().nodes, falkordb_store.counts().relationships)
    import_graph_documents(_graph_documents(), kb=kb)  # again: idempotent
    assert (falkordb_store.counts().nodes, falkordb_store.counts().relationships) == counts
