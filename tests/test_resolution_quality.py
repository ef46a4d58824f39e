"""Resolution quality on a hand-annotated corpus of duplicates and near-homonyms (real spaCy and embeddings)."""

from __future__ import annotations

from pathlib import Path

from neoweave.enrich import run
from neoweave.eval.resolution import score_resolution
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

DATA = Path(__file__).parent / "data" / "resolution"


def test_resolution_precision_and_recall(falkordb_store, embedder):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(
        DATA / "corpus.jsonl")
    run("kg", falkordb_store, embedder=embedder, progress=False)
    score = score_resolution(falkordb_store, DATA / "gold.json")
    print(score)
    assert score.found >= 20  # most annotated mentions are extracted at all
    assert score.precision >= 0.9, score.false_merges
    assert score.recall >= 0.7, score.missed_merges


def test_a_second_kg_run_changes_nothing(falkordb_store, embedder):
    """A run leaves nothing the next one would merge, relink or re-describe: the graph is the same node by node and
    edge by edge. (On the Python docs a second run merged 19 more entities before resolution ran its rules until
    nothing more merged; that mechanism is tested on hand-built graphs in test_resolution_rules.py.)"""
    from neoweave.audit.snapshot import diff, snapshot

    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(
        DATA / "corpus.jsonl")
    run("kg", falkordb_store, embedder=embedder, progress=False)
    first = snapshot(falkordb_store)
    report = run("kg", falkordb_store, embedder=embedder, progress=False)
    assert report.counters.get("merges", 0) == 0
    assert diff(first, snapshot(falkordb_store)) == []
