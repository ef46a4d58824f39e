"""Large files as users have them: a big page is written a few sections at a time, a stopped run keeps whole
sections and says so, and the next run completes the document to the graph a one-shot ingest gives."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neoweave.audit.snapshot import diff, snapshot
from neoweave.cypher.registry import explore_query
from neoweave.ingest import IngestInterrupted, IngestOptions, Ingestor, SourceOptions
from neoweave.ingest.chunking import DEFAULT_CHUNKING, Chunker
from neoweave.ingest.documents import Document
from neoweave.ingest.sources import iter_documents
from neoweave.processes import Terminated, raise_on_sigterm
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("large_inputs", ROOT / "benchmarks" / "large_inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(path: Path, kilobytes: int, links: int) -> Path:
    path.write_text(_generator().make_html_page(kilobytes * 1024, links), encoding="utf-8")
    return path


def _parsed(path: Path) -> Document:
    """The page as ingest parses and chunks it (no embedding): the counts a complete graph must hold."""
    settings = {fmt: {} for fmt in DEFAULT_CHUNKING}
    [doc] = [d for d in iter_documents(path, SourceOptions(max_file_bytes=50 * 2**20), settings)
             if isinstance(d, Document)]
    return Chunker(DEFAULT_CHUNKING["html"]).chunk(doc)


def _failing_checks(store) -> dict[str, int]:
    return {row["check"]: row["failing"] for row in store.query(explore_query("integrity_checks").text)
            if row["failing"]}


class _StopAfter:
    """The real embedder; after `calls` embedding calls the process gets a real SIGINT (as from Ctrl-C), or
    `signum`."""

    def __init__(self, embedder, calls: int, signum: int = signal.SIGINT) -> None:
        self._embedder, self.calls, self.signum = embedder, calls, signum

    def __getattr__(self, name):
        return getattr(self._embedder, name)

    def embed(self, texts):
        vectors = self._embedder.embed(texts)
        self.calls -= 1
        if self.calls == 0:
            signal.raise_signal(self.signum)
        return vectors


def test_a_stopped_large_document_is_kept_incomplete_and_the_next_run_completes_it(
        kb, falkordb_store, second_store, embedder, tmp_path):
    page = _page(tmp_path / "manual.html", 120, 300)
    doc = _parsed(page)
    options = IngestOptions(progress=False, large_document_chunks=20, embed_batch_chunks=16)
    assert len(doc.chunks) > 3 * 20

    with pytest.raises(IngestInterrupted) as stopped:
        Ingestor(falkordb_store, _StopAfter(embedder, 3), options).ingest(page)
    kept = stopped.value.report
    assert kept.interrupted and kept.documents_partly_written == 1
    [incomplete] = kept.incomplete
    assert incomplete["id"] == doc.id and incomplete["sections_total"] == len(doc.sections)
    assert 0 < incomplete["sections_written"] < len(doc.sections) and incomplete["sections_written"] == kept.sections
    stored = falkordb_store.query("MATCH (d:Document)-[:HAS_SECTION]->(s:Section) OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c) "
                                  "RETURN d.content_hash AS hash, count(DISTINCT s) AS sections, count(c) AS chunks")
    assert stored == [{"hash": None, "sections": kept.sections, "chunks": kept.chunks}]
    # whole sections: every stored section has all its chunks, in one reading order
    by_section = {s.id: len(s.chunks) for s in doc.sections}
    rows = falkordb_store.query("MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk) RETURN s.id AS id, count(c) AS n")
    assert all(by_section[row["id"]] == row["n"] for row in rows)
    assert falkordb_store.counts().relationships.get("NEXT_CHUNK", 0) == kept.chunks - 1
    assert _failing_checks(falkordb_store) == {}
    found = kb.retrieve("graph section anchor", "naive", 3)  # the stored sections serve retrieval
    assert len(found.items) == 3 and {item.doc_id for item in found.items} == {doc.id}

    finished = Ingestor(falkordb_store, embedder, options).ingest(page)
    assert (finished.documents_resumed, finished.documents_new, finished.documents_changed) == (1, 0, 0)
    assert finished.incomplete == [] and not finished.interrupted
    assert finished.sections == len(doc.sections) - kept.sections

    Ingestor(second_store, embedder, IngestOptions(progress=False)).ingest(page)  # one unit, never stopped
    assert diff(snapshot(second_store), snapshot(falkordb_store)) == []
    assert _failing_checks(falkordb_store) == {}


def test_a_large_document_in_parts_is_the_graph_of_one_unit_and_a_change_rewrites_it(
        falkordb_store, second_store, embedder, tmp_path):
    page = _page(tmp_path / "manual.html", 60, 150)
    parts = IngestOptions(progress=False, large_document_chunks=10, embed_batch_chunks=8)
    in_parts = Ingestor(falkordb_store, embedder, parts)
    in_parts.writer.links_per_unit = 16  # links resolved in many units too
    first = in_parts.ingest(page)
    Ingestor(second_store, embedder, IngestOptions(progress=False)).ingest(page)
    assert first.documents_new == 1 and first.links_resolved > 0
    assert diff(snapshot(second_store), snapshot(falkordb_store)) == []
    assert Ingestor(falkordb_store, embedder, parts).ingest(page).documents_unchanged == 1

    page.write_text(page.read_text().replace("Chapter 0:", "Chapter zero:"))  # a changed page, rewritten in parts
    changed = Ingestor(falkordb_store, embedder, parts).ingest(page)
    Ingestor(second_store, embedder, IngestOptions(progress=False)).ingest(page)
    assert changed.documents_changed == 1
    assert diff(snapshot(second_store), snapshot(falkordb_store)) == []
    assert _failing_checks(falkordb_store) == {}


def test_sigterm_stops_the_same_way_and_is_told_apart(falkordb_store, embedder, tmp_path):
    page = _page(tmp_path / "manual.html", 60, 150)
    previous = signal.getsignal(signal.SIGTERM)
    raise_on_sigterm()  # as the CLI does: SIGTERM raises in the main thread like Ctrl-C
    try:
        with pytest.raises(IngestInterrupted) as stopped:
            Ingestor(falkordb_store, _StopAfter(embedder, 2, signal.SIGTERM),
                     IngestOptions(progress=False, large_document_chunks=10, embed_batch_chunks=8)).ingest(page)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert isinstance(stopped.value.__cause__, Terminated)  # the CLI exits 143 for it, 130 for Ctrl-C
    assert stopped.value.report.incomplete and _failing_checks(falkordb_store) == {}


def _until(stream, pattern: str, seconds: float) -> str:
    """Read a child's stderr until `pattern` appears (progress bars end lines with carriage returns)."""
    seen = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        block = os.read(stream.fileno(), 4096).decode(errors="replace")
        if not block:
            break
        seen += block
        if re.search(pattern, seen):
            return seen
    raise AssertionError(f"no {pattern!r} in {seen[-2000:]!r}")


def test_ctrl_c_keeps_the_written_sections_says_so_and_the_same_command_finishes(tmp_path):
    page = _page(tmp_path / "big.html", 520, 1500)
    doc = _parsed(page)
    assert len(doc.chunks) > IngestOptions().large_document_chunks
    data_dir = tmp_path / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    command = [sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "ingest", str(page)]
    try:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        shown = _until(process.stderr, r"\b[1-9]\d*/\d+ sections", 600)  # some sections are stored
        process.send_signal(signal.SIGINT)
        err = shown + process.communicate(timeout=300)[1].decode()
        assert process.returncode == 130, err
        assert "interrupted: kept what was written: " in err, err
        assert re.search(rf"incomplete: {re.escape(str(page))}: \d+ of {len(doc.sections)} sections written", err)
        assert f"neoweave ingest {page}" in err

        check = subprocess.run([*command[:5], "check", "--json"], env=env, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        assert all(row["failing"] == 0 for row in json.loads(check.stdout))
        query = subprocess.run([*command[:5], "query", "graph section anchor", "-s", "naive", "--k", "3",
                                "--no-server", "--json"], env=env, capture_output=True, text=True)
        assert query.returncode == 0, query.stderr
        assert json.loads(query.stdout)["items"], query.stdout

        rerun = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True, timeout=900)
        assert rerun.returncode == 0, rerun.stderr
        report = json.loads(rerun.stdout)
        assert report["documents_resumed"] == 1 and report["incomplete"] == []
        store = FalkorDBStore(server=EmbeddedFalkorDB(data_dir))
        counts = store.counts()
        internal = sum(1 for s in doc.sections for link in s.links if link.internal)
        assert counts.nodes["Section"] == len(doc.sections) and counts.nodes["Chunk"] == len(doc.chunks)
        assert counts.relationships["NEXT_CHUNK"] == len(doc.chunks) - 1
        assert counts.relationships["LINKS_TO"] == report["links_resolved"]
        assert report["links_resolved"] + report["links_unresolved"] + report["self_links"] == internal
        assert _failing_checks(store) == {}
        store.close()
    finally:
        EmbeddedFalkorDB(data_dir).stop()


LONG = os.environ.get("NEOWEAVE_TEST_LONG") == "1"


@pytest.mark.skipif(not LONG, reason="minutes of embedding: scripts/test.sh --long (NEOWEAVE_TEST_LONG=1)")
def test_a_5_mb_page_with_5k_links_is_ingested_whole(cli, workdir):
    page = _page(workdir / "page.html", 5 * 1024, 5000)
    doc = _parsed(page)
    internal = sum(1 for s in doc.sections for link in s.links if link.internal)
    assert sum(len(s.links) for s in doc.sections) == 5000
    ingest = subprocess.run([sys.executable, "-m", "neoweave.cli", "ingest", str(page), "--json"], cwd=workdir,
                            env=cli.env, capture_output=True, text=True, timeout=3600)  # past cli's 180 s
    assert ingest.returncode == 0, ingest.stderr
    report = json.loads(ingest.stdout)
    assert (report["documents_new"], report["sections"], report["chunks"]) == (1, len(doc.sections), len(doc.chunks))
    assert report["links_resolved"] + report["links_unresolved"] + report["self_links"] == internal
    assert report["link_contexts_embedded"] == report["links_resolved"] and report["incomplete"] == []
    check = json.loads(cli("check", "--json").stdout)
    assert [row["check"] for row in check if row["failing"]] == []
