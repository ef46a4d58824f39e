"""Concurrency on the real embedded store: two ingests of overlapping folders at once (separate processes, as
two users would run them) while a reader watches, and an enrich step running while the HTTP API serves
queries. No errors, nothing held twice, no orphan, and readers only ever see whole documents."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import httpx
from conftest import running_server, stdlib_corpus

from neoweave.config import load_settings
from neoweave.cypher.registry import explore_query
from neoweave.enrich import run as run_step
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.kb import KnowledgeBase
from neoweave.server.app import create_app
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

CHUNKS_PER_DOCUMENT = ("MATCH (d:Document)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(c:Chunk) "
                       "RETURN d.id AS doc, count(c) AS chunks")


def _broken(store) -> dict[str, int]:
    rows = store.query(explore_query("integrity_checks").text)
    return {row["check"]: row["failing"] for row in rows if row["failing"]}


def test_two_overlapping_ingests_at_once_leave_one_whole_copy_of_each_document(tmp_path):
    records = stdlib_corpus(60).splitlines(keepends=True)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    (first / "a.jsonl").write_text("".join(records[:40]), encoding="utf-8")
    (second / "b.jsonl").write_text("".join(records[20:]), encoding="utf-8")  # records 20-39 in both
    shared = "".join(f"# Shared page {i}\n\nThe same page in both folders, number {i}, about queues.\n\n"
                     f"## Details\n\n" + "Queues hold items in order. " * 40 for i in range(3))
    for folder in (first, second):  # and the same Markdown file under the same relative path in both folders
        (folder / "shared.md").write_text(shared, encoding="utf-8")
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    server = EmbeddedFalkorDB(data_dir)
    store = FalkorDBStore(server=server)
    seen: dict[str, set[int]] = {}
    stop = threading.Event()
    errors: list[BaseException] = []

    def watch() -> None:  # a reader sampling every document's chunk count while the two ingests write
        while not stop.is_set():
            try:
                for row in store.query(CHUNKS_PER_DOCUMENT):
                    seen.setdefault(row["doc"], set()).add(row["chunks"])
            except Exception as exc:
                if "empty" not in str(exc).lower():
                    errors.append(exc)
            time.sleep(0.05)

    try:
        ingests = [subprocess.Popen([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "ingest",
                                     str(folder), "--no-progress"], env=env, cwd=tmp_path, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE) for folder in (first, second)]
        reader = threading.Thread(target=watch, daemon=True)
        reader.start()
        outputs = [process.communicate(timeout=600) for process in ingests]
        stop.set()
        reader.join(timeout=30)
        for process, (_, err) in zip(ingests, outputs, strict=True):
            assert process.returncode == 0, err[-3000:]
        assert not errors, errors
        final = {row["doc"]: row["chunks"] for row in store.query(CHUNKS_PER_DOCUMENT)}
        assert len([doc for doc in final if doc.startswith("stdlib/")]) == 60
        assert sum(1 for doc in final if doc.endswith("shared.md")) >= 1
        # every count a reader saw was the document's whole chunk count: never a half-written document
        assert seen  # the reader sampled while the ingests wrote
        partial = {doc: sorted(counts) for doc, counts in seen.items() if doc in final and counts != {final[doc]}}
        assert not partial, partial
        assert _broken(store) == {}
        chunk_ids = [row["id"] for row in store.query("MATCH (c:Chunk) RETURN c.id AS id")]
        assert len(chunk_ids) == len(set(chunk_ids)) == sum(final.values())
    finally:
        store.close()
        server.stop()


def test_an_enrich_step_runs_while_the_http_api_serves_queries(falkordb_store, embedder, tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(stdlib_corpus(50), encoding="utf-8")
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(path)
    # kg needs an entity layer (on a graph without one it stops with an error): the first chunks get theirs
    # before the server starts, and the concurrent run extends it over the rest
    first = run_step("kg", falkordb_store, embedder=embedder, progress=False, limit=10)
    settings = load_settings(overrides={"falkordb": {"data_dir": tmp_path / "data"}}, environ={})
    outcome: dict = {}

    def enrich() -> None:
        try:
            outcome["report"] = run_step("kg", falkordb_store, embedder=embedder, progress=False)
        except BaseException as exc:
            outcome["error"] = exc

    answered: list[int] = []
    during = 0
    kb = KnowledgeBase(settings, store=falkordb_store, embedder=embedder)  # the same store object is enriched
    with running_server(create_app(kb)) as url, \
            httpx.Client(base_url=url, timeout=120) as client:
        worker = threading.Thread(target=enrich)
        worker.start()
        questions = ["How are threads started?", "What does the json module decode?", "How is a socket closed?"]
        while worker.is_alive() or len(answered) < 6:
            for name in ("naive", "larag", "kg"):
                response = client.post("/query", json={"question": questions[len(answered) % 3], "strategy": name,
                                                       "k": 3})
                assert response.status_code == 200, response.text
                items = response.json()["items"]
                assert items and len({item["chunk_id"] for item in items}) == len(items)
                answered.append(len(items))
                during += worker.is_alive()
        worker.join()
    assert "error" not in outcome, outcome.get("error")
    chunks = falkordb_store.counts().nodes["Chunk"]
    assert first.chunks == 10 and outcome["report"].chunks == chunks - 10 and not outcome["report"].failures
    assert _broken(falkordb_store) == {}
    entities = falkordb_store.counts().nodes.get("Entity", 0)
    assert entities > 0 and len(answered) >= 6 and during > 0
    again = run_step("kg", falkordb_store, embedder=embedder, progress=False)  # nothing left half-done
    assert again.chunks == 0 and falkordb_store.counts().nodes.get("Entity", 0) == entities
