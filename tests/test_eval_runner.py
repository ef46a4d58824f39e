"""The evaluation runner on the hand-built site: LARAG's link reaches evidence naive retrieval misses."""

import json

import pytest

from neoweave.errors import NeoweaveError
from neoweave.eval.runner import RunConfig, load_qa, markdown_table, run, summarize, write_report
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions


@pytest.fixture
def graph(falkordb_store, embedder, site):
    options = IngestOptions(sources=SourceOptions(base_url="https://docs.example.org/tiny/"), progress=False)
    Ingestor(falkordb_store, embedder, options).ingest(site)
    return falkordb_store


def test_runner_scores_strategies_side_by_side(graph, embedder, tmp_path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({
        "id": "q1", "question": "How does the event loop schedule coroutines?", "answer": "x", "aliases": [],
        "evidence": ["https://docs.example.org/tiny/guide/memory.html#garbage-collection"], "type": "bridge"}) + "\n")
    questions = load_qa(qa)
    records = run(graph, embedder, questions, RunConfig(["naive", "larag"], [1]), progress=False)
    by_strategy = {r["strategy"]: r for r in records}
    assert by_strategy["naive"]["hit"] == 0.0 and by_strategy["naive"]["mrr"] == 0.0
    assert by_strategy["larag"]["hit"] == 1.0 and by_strategy["larag"]["perfect"] == 1.0
    assert by_strategy["larag"]["mrr"] == 0.5  # the linked chunk is second, after the seed
    rows = summarize(records)
    assert {(r["strategy"], r["type"]) for r in rows} == {("naive", "all"), ("naive", "bridge"),
                                                          ("larag", "all"), ("larag", "bridge")}
    table = markdown_table(rows)
    assert "| larag | 1 | all | 1 | 1.000 |" in table
    report = write_report(tmp_path / "out", records, rows, "tiny")
    assert report.read_text().startswith("# tiny") and (tmp_path / "out" / "records.json").exists()


def test_bad_qa_file_names_the_line(tmp_path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "q1", "question": "?", "evidence": []}\n{"question": "no id"}\n')
    with pytest.raises(NeoweaveError, match=r"qa\.jsonl:2: not a QA record"):
        load_qa(qa)
