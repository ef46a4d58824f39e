"""The evaluation runner on the hand-built site: LARAG's link reaches evidence naive retrieval misses."""

import json

import pytest

from neoweave.config import load_settings
from neoweave.errors import NeoweaveError
from neoweave.eval.report import markdown_table, write_report
from neoweave.eval.runner import RunConfig, load_qa, run, summarize
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.llm import LOCAL_TIMEOUT, create_gateway
from neoweave.query.citations import cited_numbers

EVIDENCE = "https://docs.example.org/tiny/guide/memory.html#garbage-collection"


@pytest.fixture
def graph(falkordb_store, embedder, site):
    options = IngestOptions(sources=SourceOptions(base_url="https://docs.example.org/tiny/"), progress=False)
    Ingestor(falkordb_store, embedder, options).ingest(site)
    return falkordb_store


def _qa(tmp_path, *rows):
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return load_qa(qa)


def test_runner_scores_strategies_side_by_side(graph, embedder, tmp_path):
    questions = _qa(tmp_path, {"id": "q1", "question": "How does the event loop schedule coroutines?",
                               "answer": "reference cycles", "aliases": [], "evidence": [EVIDENCE],
                               "type": "bridge"})
    evaluation = run(graph, embedder, questions, RunConfig(["naive", "larag"], [1]), progress=False,
                     pids={"graph_server": graph.server_pid()})
    by_strategy = {r["strategy"]: r for r in evaluation.records}
    assert by_strategy["naive"]["hit"] == 0.0 and by_strategy["naive"]["mrr"] == 0.0
    assert by_strategy["larag"]["hit"] == 1.0 and by_strategy["larag"]["perfect"] == 1.0
    assert by_strategy["larag"]["mrr"] == 0.5  # the linked chunk is second, after the seed
    # the answer's words are in the linked chunk only
    assert by_strategy["naive"]["answer_in_context"] == 0.0 and by_strategy["larag"]["answer_in_context"] == 1.0
    assert "answer" not in by_strategy["larag"] and evaluation.bertscore_model is None
    rows = summarize(evaluation)
    assert [(r["strategy"], r["type"]) for r in rows] == [("larag", "all"), ("larag", "bridge"),
                                                         ("naive", "all"), ("naive", "bridge")]
    overall = rows[0]
    assert overall["answer_in_context"] == 1.0 and rows[2]["answer_in_context"] == 0.0
    assert overall["graph_server_peak_rss_mb"] > 0 and overall["neoweave_peak_rss_mb"] > 0
    assert "wall_s" not in rows[1]  # resources are measured per (strategy, k), not per question type
    assert set(overall["stage_ms"]) == {"embed", "graph", "retrieval"}
    # retrieval = all but the question's embedding (and an answer call): here the graph stage alone
    record = next(r for r in evaluation.records if r["strategy"] == "larag")
    assert overall["stage_ms"]["retrieval"]["p50"] == pytest.approx(record["total_ms"] - record["ms"]["embed"])
    # the graph stage statement by statement: every statement larag sent is timed, within the graph stage
    assert "chunk_vector_search" in record["statement_ms"] and all(ms > 0 for ms in record["statement_ms"].values())
    assert sum(record["statement_ms"].values()) <= record["ms"]["graph"]
    assert overall["statement_ms"]["chunk_vector_search"] == {
        "questions": 1, "p50": record["statement_ms"]["chunk_vector_search"],
        "p95": record["statement_ms"]["chunk_vector_search"]}
    table = markdown_table(rows)
    assert "| larag | 1 | all | 1 | 1.000 |" in table
    report = write_report(tmp_path / "out", evaluation, rows, "tiny", setup={"QA set": "qa.jsonl"})
    text = report.read_text()
    assert text.startswith("# tiny") and "- QA set: qa.jsonl" in text and "## Memory and CPU" in text
    assert "## Latency per statement" in text and "| larag | 1 | chunk_vector_search | 1 |" in text
    assert "![quality against context tokens](plot.png)" in text
    assert (tmp_path / "out" / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rows"][0]["hit"] == 1.0
    assert json.loads((tmp_path / "out" / "records.json").read_text())[0]["question_id"] == "q1"


def test_answers_are_scored_with_the_local_model(graph, embedder, tmp_path, llm_data_dir, model_dir):
    questions = _qa(
        tmp_path,
        {"id": "gc", "question": "What does the cyclic garbage collector find?",
         "answer": "reference cycles", "aliases": ["unreachable reference cycles"], "evidence": [EVIDENCE]},
        {"id": "loop", "question": "What schedules coroutines?", "answer": "the event loop", "aliases": [],
         "evidence": []})
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": {
        "model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}})
    llm = create_gateway(settings)
    assert llm.client.timeout == LOCAL_TIMEOUT  # the local model's long default (it finishes abandoned requests)
    config = RunConfig(["naive", "larag"], [1], answer=True, prompts={"larag": "hyperlinked"}, max_tokens=24)
    evaluation = run(graph, embedder, questions, config, llm=llm, progress=False,
                     pids={"llm_server": llm.server_pid})
    assert len(evaluation.records) == 4
    for record in evaluation.records:
        assert record["answer"] and record["gold"] in ("reference cycles", "the event loop"), record["prompt"]
        # a second call for citations: short_answer's follow-up turn, or hyperlinked asked again when the model
        # answered with the numbers only; none after Insufficient Information
        assert record["llm_calls"] in (1, 2)
        assert record["llm_tokens"] > 50
        assert 0.0 <= record["f1"] <= 1.0 and 0.0 <= record["rouge_l"] <= 1.0
        assert -1.0 <= record["bertscore"] <= 1.0
        assert record["exact_match"] in (0.0, 1.0) and record["insufficient"] in (0.0, 1.0)
        assert set(record["ms"]) == {"embed", "graph", "llm"}
        assert record["context_dropped"] == 0  # two small passages fit the 0.5B's window whole
    assert evaluation.bertscore_model.startswith("all-MiniLM-L6-v2")
    overall = next(r for r in summarize(evaluation) if r["strategy"] == "larag" and r["type"] == "all")
    assert overall["llm_server_peak_rss_mb"] > 100 and overall["llm_server_cpu_s"] > 0
    assert {"rouge_l", "bertscore", "f1", "exact_match", "insufficient", "cites", "citation_recall"} <= set(overall)
    gc = next(r for r in evaluation.records if r["question_id"] == "gc" and r["strategy"] == "naive")
    cited = gc["citations"]  # one passage was given (k=1): any other number names nothing and counts as wrong
    assert 0.0 <= gc["citation_recall"] <= 1.0 and gc["cites"] == float(bool(cited))
    if cited:
        assert gc["citation_precision"] <= sum(number == 1 for number in cited) / len(cited)
    for record in evaluation.records:  # the citation check's changes, beside the model's own numbers and scores
        if "citations" in record:
            model = set(record["model_citations"])
            assert set(record["citations"]) == (model - set(record["citations_dropped"])) | set(
                record["citations_added"])
            assert cited_numbers(record["cited_answer"]) == record["citations"]
            assert cited_numbers(record["model_cited_answer"]) == record["model_citations"]
            assert ("model_citation_precision" in record) == bool(model)
    assert "model_citation_recall" in overall
    again = run(graph, embedder, questions, config, llm=llm, progress=False)  # every call now from the LLM cache
    for first, record in zip(evaluation.records, again.records, strict=True):
        assert record["answer_cached"] == 1.0 and record["llm_cached_calls"] == record["llm_calls"] > 0
        assert record["llm_tokens"] == first["llm_tokens"] and record["answer"] == first["answer"]


def test_answering_without_a_gateway_is_refused(graph, embedder, tmp_path):
    questions = _qa(tmp_path, {"id": "q", "question": "?", "answer": "a", "evidence": []})
    with pytest.raises(NeoweaveError, match="needs an LLM gateway"):
        run(graph, embedder, questions, RunConfig(["naive"], [1], answer=True), progress=False)


def test_bad_qa_file_names_the_line(tmp_path):
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"id": "q1", "question": "?", "evidence": []}\n{"question": "no id"}\n')
    with pytest.raises(NeoweaveError, match=r"qa\.jsonl:2: not a QA record"):
        load_qa(qa)
    with pytest.raises(NeoweaveError, match="QA file not found"):
        load_qa(tmp_path / "missing.jsonl")
    qa.write_text('{"id": "q1", "question": "?", "evidence": []}\n\n{"id": 7, "question": "?", "evidence": []}\n'
                  '{"id": "7", "question": "again?", "evidence": []}\n')
    with pytest.raises(NeoweaveError, match=r"qa\.jsonl:4: id '7' is line 3's too"):
        load_qa(qa)
