"""Every state between commands is servable (issue 74): deleting a link target (`delete`, or removing the file and
`sync`) keeps the context embeddings of the links that remain, so larag and ppr answer and `check` passes; a link
without its context embedding, however it came about, is skipped by retrieval with a note in the trace and flagged
by `check`. Real store, embedding model and files."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from neoweave.query.base import LINK_CONTEXT_REPAIR

PAGES = {
    "alpha.html": ("Alpha reactor", "The alpha reactor heats the coolant loop of the plant. It is cooled by "
                   '<a href="beta.html">the beta pump</a> and watched from <a href="gamma.html">the gamma '
                   "console</a>."),
    "beta.html": ("Beta pump", "The beta pump moves water through the coolant loop of the alpha reactor. It is "
                  'driven by <a href="alpha.html">the alpha turbine shaft</a> and switched from '
                  '<a href="gamma.html">the gamma console</a>.'),
    "gamma.html": ("Gamma console", "The gamma console shows the temperature of the coolant loop. Operators there "
                   'start <a href="alpha.html">the alpha reactor</a> and <a href="beta.html">the beta pump</a>.'),
}
QUESTIONS = ("What cools the alpha reactor?", "Where is the beta pump switched from?",
             "What drives the beta pump?", "Which console shows the coolant temperature?")
LINK_STRATEGIES = ("larag", "ppr")


def write_site(folder: Path) -> Path:
    """Three HTML pages that link to each other."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (title, body) in PAGES.items():
        (folder / name).write_text(f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
                                   f"<p>{body}</p></body></html>", encoding="utf-8")
    return folder


def links(store) -> list[dict]:
    """Every link with whether its context is embedded, by source and target document."""
    return store.query("MATCH (s:Section)-[l:LINKS_TO]->(t:Section) RETURN s.doc_id AS source, t.doc_id AS target, "
                       "l.context_embedding IS NOT NULL AS embedded ORDER BY source, target")


def authored(store) -> list[dict]:
    return store.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) WHERE coalesce(l.method, 'authored') = 'authored' "
                       "RETURN l.order AS order")


def failing_checks(kb) -> dict[str, list]:
    return {row["check"]: row["examples"] for row in kb.check() if row["failing"]}


def assert_servable(kb) -> None:
    """larag and ppr answer every question without error; every link keeps its context embedding; check passes."""
    unembedded = [row for row in links(kb.store) if not row["embedded"]]
    assert not unembedded, unembedded
    assert failing_checks(kb) == {}
    for name in LINK_STRATEGIES:
        for question in QUESTIONS:
            result = kb.retrieve(question, name, 3)
            assert result.items, (name, question)


@pytest.fixture
def linked_site(kb, tmp_path) -> Path:
    folder = write_site(tmp_path / "site")
    kb.ingest(folder)
    between = links(kb.store)
    assert len(between) == 6 and all(row["embedded"] for row in between), between
    kb.enrich("kg")  # ppr walks the entity graph too
    assert_servable(kb)
    return folder


def test_delete_of_a_link_target_keeps_the_other_links_servable(kb, linked_site):
    deleted = kb.delete(str(linked_site / "gamma.html"))
    assert len(deleted) == 1
    assert len(authored(kb.store)) == 2  # alpha <-> beta remain
    assert_servable(kb)


def test_sync_after_removing_a_link_target_keeps_the_other_links_servable(kb, linked_site):
    (linked_site / "gamma.html").unlink()
    report = kb.sync(linked_site)
    assert len(report.deleted) == 1
    assert len(authored(kb.store)) == 2
    assert_servable(kb)


def test_links_re_resolved_unchanged_keep_their_embeddings_without_a_model(kb, tmp_path):
    """Deleting a link target re-resolves the pages linking to it; their other links come back with the same
    target, order and context and keep their context embeddings: no embedder is needed (none is given here)."""
    from neoweave.ingest import GraphWriter

    folder = write_site(tmp_path / "site")
    kb.ingest(folder)
    gamma = kb.cypher("MATCH (d:Document) WHERE d.path ENDS WITH 'gamma.html' RETURN d.id AS id")[0]["id"]
    report = GraphWriter(kb.store).delete_documents([gamma])
    assert report.documents == 2 and report.resolved == 2 and report.unresolved == 2  # alpha and beta
    assert report.contexts_embedded == 0
    assert [row["embedded"] for row in links(kb.store)] == [True, True]


def test_a_link_without_its_context_embedding_is_skipped_noted_and_flagged(kb, linked_site):
    """However a link lost its context embedding (a graph from before ingest embedded them, an import of one),
    larag and ppr answer without it and say so; `check` names it; the named repair makes the graph whole."""
    alpha, beta = (str(linked_site / name) for name in ("alpha.html", "beta.html"))
    kb.cypher("MATCH (s:Section {doc_id: $a})-[l:LINKS_TO]->(t:Section {doc_id: $b}) "
              "SET l.context_embedding = null", {"a": f"file://{alpha}", "b": f"file://{beta}"}, write=True)
    assert [row for row in links(kb.store) if not row["embedded"]]
    failing = failing_checks(kb)
    assert list(failing) == ["link without its context embedding"]
    (source, target), = (example.split(" -> ") for example in failing["link without its context embedding"])
    for name in LINK_STRATEGIES:
        result = kb.retrieve("What cools the alpha reactor?", name, 3, walk_index="store") if name == "ppr" else \
            kb.retrieve("What cools the alpha reactor?", name, 3)
        assert result.items and result.trace.skipped_links == [(source, target)], name
        assert result.trace.notes == [f"{name}: skipped 1 link(s) without a context embedding (e.g. {source} -> "
                                      f"{target}); {LINK_CONTEXT_REPAIR}"]
        assert (source, "LINKS_TO", target) not in result.trace.relationships
    kb.ingest(linked_site)  # the repair the note names: unchanged documents are skipped, the context embedded
    assert failing_checks(kb) == {}
    assert not kb.retrieve("What cools the alpha reactor?", "larag", 3).trace.notes


def test_the_probe_from_the_command_line(cli, workdir):
    """Issue 74's probe as a user runs it: ingest three linked pages, enrich kg, delete one; larag and ppr answer
    and check passes. A link planted without its context embedding: queries still answer and print a note,
    check fails naming it."""
    site = write_site(workdir / "pages")
    cli("ingest", str(site))
    cli("enrich", "kg")
    cli("delete", str(site / "gamma.html"))
    for name in LINK_STRATEGIES:
        answered = cli("query", "What cools the alpha reactor?", "-s", name, "--k", "3")
        assert "note:" not in answered.stdout
    assert "all 23 checks pass" in cli("check").stdout
    cli("cypher", "MATCH ()-[l:LINKS_TO]->() SET l.context_embedding = null", "--write")
    noted = cli("query", "What cools the alpha reactor?", "-s", "larag", "--k", "3")
    assert "note: larag: skipped 2 link(s) without a context embedding" in " ".join(noted.stdout.split())
    flagged = cli("check", "--json", check=False)
    assert flagged.returncode == 1
    assert {row["check"]: row["failing"] for row in json.loads(flagged.stdout) if row["failing"]} == {
        "link without its context embedding": 2}


MORE_PAGES = [
    {"id": "a1", "title": "Aachen", "text": "Aachen is a city where Lothair II, Teutberga and Waldrada lived."},
    {"id": "l1", "title": "Lotharingia", "text": "Lotharingia was the kingdom of Lothair II and Teutberga."},
    {"id": "c1", "title": "CWI", "text": "CWI in Amsterdam is where Guido van Rossum created Python."},
]


def test_reads_while_enrich_kg_rewrites_inferred_links_never_meet_an_unembedded_link(kb, falkordb_server, embedder,
                                                                                    tmp_path):
    """Issue 74's `serve` during `enrich kg`: a second knowledge base on the same graph (another connection, read
    only, as `serve` is) polls larag and ppr while pages homing entities the corpus mentions are ingested and
    `enrich kg` recomputes the inferred links of the sections that mention them: every poll answers, and none meets
    a link without its context embedding (links are written with theirs, one unit a batch)."""
    from conftest import COMMUNITY_CORPUS, ingest_records

    from neoweave.kb import KnowledgeBase
    from neoweave.store.falkordb_store import FalkorDBStore

    ingest_records(kb.store, embedder, tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    kb.enrich("kg")
    inferred = "MATCH ()-[l:LINKS_TO {method: 'inferred'}]->() RETURN count(l) AS n"
    assert kb.cypher(inferred)[0]["n"] > 0
    reading = FalkorDBStore(server=falkordb_server, graph=kb.store.graph_name)
    polls: list[tuple[str, list[str]]] = []
    errors: list[str] = []
    stop = threading.Event()

    def poll(reader: KnowledgeBase) -> None:
        while not stop.is_set():
            for name in LINK_STRATEGIES:
                try:
                    result = reader.retrieve("Who founded the Python Software Foundation?", name, 3)
                except Exception as exc:  # every failure is the finding
                    errors.append(f"{name}: {type(exc).__name__}: {exc}")
                else:
                    polls.append((name, result.trace.notes))

    with KnowledgeBase(kb.settings, store=reading, embedder=embedder, read_only=True) as reader:
        poller = threading.Thread(target=poll, args=(reader,), daemon=True)
        poller.start()
        deadline = time.monotonic() + 60
        while len(polls) + len(errors) < 2 and time.monotonic() < deadline:  # serving before the write starts
            time.sleep(0.05)
        # a page homing entities the corpus mentions: enrich kg recomputes the inferred links of their sections
        ingest_records(kb.store, embedder, tmp_path / "more.jsonl", MORE_PAGES)
        before = len(polls)
        report = kb.enrich("kg")
        stop.set()
        assert report.counters.get("sections_relinked", 0) >= 3, report.counters
        poller.join(timeout=60)
    reading.close()
    assert errors == []
    assert len(polls) - before >= 4, "the reads must overlap the write"
    assert [notes for _, notes in polls if notes] == []
