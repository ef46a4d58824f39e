"""The seed papers' measures on hand-computed examples: precision and document-level hits, equal budgets,
short-answer accuracy with the null rule, correlations, quantile bins, bootstrap intervals, run comparison."""

from __future__ import annotations

import json

import pytest

from neoweave.errors import NeoweaveError
from neoweave.eval import analysis, measures
from neoweave.eval.compare import compare_runs, comparison_markdown, load_bertscore_model, load_records
from neoweave.eval.report import analysis_table

DOC = "https://docs.example.org/guide/async.html"


def test_precision_and_document_level_ground_truth():
    retrieved = [f"{DOC}#event-loop", f"{DOC}#tasks", "https://docs.example.org/other.html#x", f"{DOC}#event-loop"]
    evidence = [f"{DOC}#event-loop"]
    assert measures.precision(retrieved, evidence) == 0.5  # 2 of 4 retrieved chunks are gold sections
    assert measures.document_precision(retrieved, evidence) == 0.75  # 3 of 4 come from the gold page
    assert measures.document_hit([f"{DOC}#tasks"], evidence) == 1.0  # another section of the gold page counts
    assert measures.precision([], evidence) == 0.0
    assert measures.document_key("Arthur's Magazine") == "Arthur's Magazine"  # titles are documents already


def test_equal_budgets_cut_by_rank_and_by_tokens():
    keys, tokens, gold = ["a", "x", "b", "y"], [100, 300, 200, 50], ["a", "b"]
    scores = measures.budget_scores(keys, tokens, gold, chunk_budgets=[1, 3], token_budgets=[350, 600, 10])
    assert scores["chunks:1"]["recall"] == 0.5 and scores["chunks:1"]["precision"] == 1.0
    assert scores["chunks:3"]["perfect"] == 1.0 and scores["chunks:3"]["precision"] == pytest.approx(2 / 3)
    assert scores["tokens:350"]["chunks"] == 1.0  # 100 fits, 100 + 300 does not
    assert scores["tokens:600"]["chunks"] == 3.0 and scores["tokens:600"]["perfect"] == 1.0
    assert scores["tokens:10"] == {**measures.retrieval_scores([], gold), "chunks": 0.0}
    assert scores["chunks:3"]["mrr"] == 1.0


@pytest.mark.parametrize("prediction,golds,qtype,expected", [
    ("Insufficient information.", ["Insufficient information."], "null_query", 1.0),
    ("Sam Altman", ["Insufficient information."], "null_query", 0.0),
    ("It was Sam Altman, the CEO.", ["Sam Altman"], "inference_query", 1.0),
    ("Insufficient information", ["Sam Altman"], "inference_query", 0.0),  # declining is never right here
    ("Samuel", ["Sam"], "comparison_query", 0.0),  # whole words only
    ("Yes", ["yes"], "comparison_query", 1.0),
    ("The Guardian", ["Insufficient Information"], "", 0.0),  # a null question by its gold answer
])
def test_short_answer_accuracy_with_the_null_rule(prediction, golds, qtype, expected):
    assert measures.short_answer_accuracy(prediction, golds, qtype) == expected


def test_correlations_ranks_bins_and_bootstrap():
    assert analysis.pearson([1, 2, 3, 4], [2, 4, 6, 8]) == pytest.approx(1.0)
    assert analysis.pearson([1, 2, 3, 4], [8, 6, 4, 2]) == pytest.approx(-1.0)
    assert analysis.pearson([1, 1, 1], [1, 2, 3]) is None and analysis.pearson([1, 2], [1, 2]) is None
    assert analysis.ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]
    assert analysis.spearman([1, 2, 3, 4], [1, 4, 9, 16]) == pytest.approx(1.0)  # monotone, not linear
    assert analysis.pearson([1, 2, 3, 4], [1, 4, 9, 16]) < 1.0
    bins = analysis.quantile_bins([4, 1, 3, 2, 8, 6, 5, 7], [0.4, 0.1, 0.3, 0.2, 0.8, 0.6, 0.5, 0.7], bins=4)
    assert [(b["low"], b["high"], b["n"]) for b in bins] == [(1, 2, 2), (3, 4, 2), (5, 6, 2), (7, 8, 2)]
    assert [round(b["mean"], 2) for b in bins] == [0.15, 0.35, 0.55, 0.75]
    low, high = analysis.bootstrap_ci([1.0] * 20)
    assert low == high == 1.0
    low, high = analysis.bootstrap_ci([1.0, -1.0] * 50)
    assert low < 0 < high and analysis.bootstrap_ci([1.0, -1.0] * 50) == (low, high)  # seeded


def test_answer_analysis_reports_lengths_tokens_time_and_bins():
    records = [{"strategy": "naive", "k": 5, "gold": "a " * n, "answer": "x " * n, "f1": n / 10,
                "context_tokens": 100 * n, "total_ms": 50.0} for n in range(1, 9)]
    row = analysis.answer_analysis(records)[0]
    assert row["pearson_reference_length"] == pytest.approx(1.0) and row["spearman_prediction_length"] == 1.0
    assert row["pearson_ms"] is None  # constant time: no correlation to speak of
    assert len(row["f1_by_reference_length"]) == 4 and row["f1_by_reference_length"][0]["mean"] == pytest.approx(0.15)


def test_answer_costs_are_correlated_over_the_questions_whose_llm_calls_all_ran():
    """A call from the LLM cache reports no tokens and a few milliseconds: a question with one (its answer, or a
    retrieval step such as Orion's expansion) would pull the cost correlations (LARAG's tokens and time) toward
    whatever it scored."""
    live = [{"strategy": "larag", "k": 5, "gold": "a b", "answer": "x", "f1": n / 10, "context_tokens": 100,
             "prompt_tokens": 1000 - 100 * n, "completion_tokens": 10, "total_ms": 5000.0 - 500 * n,
             "llm_cached_calls": 0, "answer_cached": 0.0} for n in range(1, 7)]
    cheap = {"prompt_tokens": 0, "completion_tokens": 0}
    cached = [{**live[0], **cheap, "f1": 0.9, "total_ms": 3.0, "llm_cached_calls": 1, "answer_cached": 1.0},
              {**live[0], "f1": 0.8, "total_ms": 2.0, "llm_cached_calls": 2, "answer_cached": 0.0},  # retrieval's
              {**{key: value for key, value in live[0].items() if key != "llm_cached_calls"},  # an older record
               **cheap, "f1": 0.7, "total_ms": 4.0, "answer_cached": 1.0}]
    row = analysis.answer_analysis(live + cached)[0]
    assert row["questions"] == 9 and row["questions_live"] == 6
    assert row["pearson_total_tokens"] == pytest.approx(-1.0) and row["pearson_ms"] == pytest.approx(-1.0)
    assert row["spearman_ms"] == pytest.approx(-1.0)
    assert "none taken from the LLM cache" in analysis_table([row]) and "larag k=5: 6" in analysis_table([row])


def _record(strategy, qid, hit, recall, qtype="bridge"):
    return {"strategy": strategy, "k": 5, "question_id": qid, "question": f"q{qid}?", "type": qtype, "hit": hit,
            "recall": recall}


def test_compare_two_runs_with_intervals_and_flips(tmp_path):
    a = [_record("naive", i, 1.0 if i < 6 else 0.0, 0.5) for i in range(10)]
    b = [_record("naive", i, 1.0 if i < 9 else 0.0, 0.5 + (0.5 if i < 5 else 0.0)) for i in range(10)]
    comparison = compare_runs(a, b, metrics=("hit", "recall"))
    overall = {r["metric"]: r for r in comparison.rows if r["type"] == "all"}
    assert overall["hit"]["diff"] == pytest.approx(0.3) and overall["hit"]["n"] == 10
    assert overall["hit"]["ci_low"] > 0 and overall["hit"]["significant"]
    assert overall["recall"]["diff"] == pytest.approx(0.25)
    assert sorted(f["question_id"] for f in comparison.flipped) == ["6", "7", "8"]
    assert all(f["direction"] == "gained" for f in comparison.flipped)
    text = comparison_markdown(comparison)
    assert "| naive | naive | 5 | all | hit | 10 | 0.600 | 0.900 | +0.300 * |" in text
    assert "Flipped questions (3 gained, 0 lost in B)" in text
    # two strategies of one run, and a question only one side has
    run = [_record("naive", i, 0.0, 0.0) for i in range(3)] + [_record("larag", i, 1.0, 1.0) for i in range(4)]
    two = compare_runs(run, run, a_strategy="naive", b_strategy="larag", metrics=("hit",))
    assert two.rows[0]["a_strategy"] == "naive" and two.rows[0]["diff"] == 1.0 and two.unpaired == 1
    with pytest.raises(NeoweaveError, match="share no"):
        compare_runs(a, [_record("larag", 0, 1.0, 1.0)])
    (tmp_path / "records.json").write_text(json.dumps(a))
    assert load_records(tmp_path) == a
    assert "BERTScore" not in text  # no BERTScore row: no model line


def test_compare_names_the_bertscore_model_of_each_run(tmp_path):
    a = [{**_record("naive", i, 1.0, 0.5), "bertscore": 0.5} for i in range(4)]
    b = [{**_record("naive", i, 1.0, 0.5), "bertscore": 0.6} for i in range(4)]
    (tmp_path / "summary.json").write_text(json.dumps({"bertscore_model": "roberta-large layer 17"}))
    assert load_bertscore_model(tmp_path) == "roberta-large layer 17"
    assert load_bertscore_model(tmp_path / "missing") is None
    (tmp_path / "records.json").write_text("[]")
    assert load_bertscore_model(tmp_path / "records.json") == "roberta-large layer 17"  # the summary beside it
    comparison = compare_runs(a, b, metrics=("bertscore",))
    comparison.bertscore_models = (load_bertscore_model(tmp_path / "missing"), load_bertscore_model(tmp_path))
    text = comparison_markdown(comparison)
    assert ("BERTScore on A: not recorded (neoweave's default: all-MiniLM-L6-v2 layer last, no baseline "
            "rescaling); on B: roberta-large layer 17.") in text
    comparison.bertscore_models = ("roberta-large layer 17", "roberta-large layer 17")
    assert "BERTScore on both runs: roberta-large layer 17." in comparison_markdown(comparison)
    with pytest.raises(NeoweaveError, match="no evaluation records"):
        load_records(tmp_path / "missing")


def test_concurrent_evaluation_gives_the_sequential_records(falkordb_store, embedder, site):
    from neoweave.eval.runner import Question, RunConfig, run, summarize
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    evidence = "https://docs.example.org/tiny/guide/memory.html#garbage-collection"
    questions = [Question(str(i), q, "", [], [evidence]) for i, q in enumerate(
        ["What does the garbage collector find?", "How is memory freed?", "What schedules coroutines?",
         "How do I cancel a task?"] * 3)]

    def outcome(concurrency: int):
        evaluation = run(falkordb_store, embedder, questions, RunConfig(["naive", "larag"], [2], bertscore=None,
                                                                        concurrency=concurrency), progress=False)
        return evaluation, summarize(evaluation)

    sequential, _ = outcome(1)
    concurrent, rows = outcome(8)
    key = lambda r: (r["strategy"], r["question_id"])  # noqa: E731
    assert [(key(r), [x["chunk_id"] for x in r["retrieved"]]) for r in sorted(concurrent.records, key=key)] == \
           [(key(r), [x["chunk_id"] for x in r["retrieved"]]) for r in sorted(sequential.records, key=key)]
    overall = [r for r in rows if r["type"] == "all"]
    assert all(r["questions_per_s"] > 0 and r["wall_s"] > 0 for r in overall)


def test_paper_tables_show_each_papers_measures_and_name_the_missing():
    from neoweave.eval.paper_tables import paper_tables_markdown

    def row(strategy, kind, **values):
        return {"strategy": strategy, "k": 5, "type": kind, "questions": 2, **values}

    rows = [row("naive", "all", doc_hit=0.5, doc_precision=0.2, bertscore=0.61, bertscore_p=0.6, bertscore_r=0.62,
                accuracy=0.5, insufficient=0.0, p50_ms=12.0, llm_tokens=700.0, answer_similarity=0.7),
            row("naive", "bridge", accuracy=1.0, questions=1), row("naive", "comparison", accuracy=0.0, questions=1),
            row("larag", "all", doc_hit=1.0, doc_precision=0.4, p50_ms=30.0, wall_s=320.0, questions_per_s=0.031)]
    records = [{"strategy": "naive", "k": 5, "prompt": "unified"}]
    text = paper_tables_markdown(rows, records)
    assert text.index("### LARAG") < text.index("### Thesis") < text.index("### Orion-RAG")
    assert "| naive | 5 | unified | 0.600 | 0.620 | 0.610 |" in text  # P, R, F1 under LARAG's names
    assert "| naive | 5 | 0.500 | 1.000 (n=1) | 0.000 (n=1) | 0.000 | 700 |" in text  # accuracy per type
    assert "| larag | 5 | 1.000 | 0.400 | 30 | 320.0 | 0.031 |" in text  # Orion: document-level hit, precision@k
    assert "Not measured in this run: C-Rec, A-Corr, A-Rel (`neoweave eval --answer`)" in text
    assert "BERTScore here: all-MiniLM-L6-v2 layer last, no baseline rescaling" in text  # under LARAG's table
    assert "| strategy | k | A-Sim | LLM tokens |\n| --- | --- | --- | --- |\n| naive | 5 | 0.700 | 700 |" in text
    assert "### PankRAG" not in text  # none of its measures without a judge
    judged = paper_tables_markdown([row("naive", "all", khl_c_rec=0.4, answer_similarity=0.7, khl_a_corr=0.5,
                                        khl_a_rel=0.3, context_recall=0.9, context_relevancy=0.2)], [],
                                   bertscore_model="roberta-large layer 17")
    assert ("| strategy | k | C-Rec | A-Sim | A-Corr | A-Rel | RAGAS context recall (judged) |\n| --- | --- | --- | "
            "--- | --- | --- | --- |\n| naive | 5 | 0.400 | 0.700 | 0.500 | 0.300 | 0.900 |") in judged
    assert "| naive | 5 | 0.200 |" in judged.split("### PankRAG")[1]  # eq. 8 under PankRAG's name, judged
    assert "context recall, eq. 8 (judged)" in judged and "BERTScore here" not in judged  # no BERTScore column
    assert paper_tables_markdown([row("naive", "all", hit=1.0)], []) == ""


def test_paper_tables_over_several_runs_each_strategy_from_one(tmp_path, monkeypatch, capsys):
    import sys

    from neoweave.cli import main
    from neoweave.eval.paper_tables import tables_from_runs

    for name, precision in (("naive", 0.2), ("larag", 0.4)):
        run = tmp_path / f"run-{name}"
        run.mkdir()
        rows = [{"strategy": name, "k": k, "type": "all", "questions": 2, "doc_hit": 1.0,
                 "doc_precision": precision / k * 5} for k in (5, 10)]
        (run / "summary.json").write_text(json.dumps({"title": name, "rows": rows}), encoding="utf-8")
        records = [{"strategy": name, "k": k, "question_id": q} for k in (5, 10) for q in ("q1", "q2")]
        (run / "records.json").write_text(json.dumps(records), encoding="utf-8")
    text = tables_from_runs([tmp_path / "run-naive", tmp_path / "run-larag"], k=5)
    assert "| naive | 5 | 1.000 | 0.200 |" in text and "| larag | 5 | 1.000 | 0.400 |" in text
    assert "| 10 |" not in text
    assert "with these runs' numbers" in text  # merged from two report directories
    with pytest.raises(NeoweaveError, match=r"naive at k = (5|10) is in both"):
        tables_from_runs([tmp_path / "run-naive", tmp_path / "run-naive"])
    with pytest.raises(NeoweaveError, match="no strategy was evaluated at k = 3"):
        tables_from_runs([tmp_path / "run-naive"], k=3)
    (tmp_path / "run-larag" / "summary.json").unlink()
    with pytest.raises(NeoweaveError, match=r"no evaluation summary at .*run-larag/summary.json"):
        tables_from_runs([tmp_path / "run-naive", tmp_path / "run-larag"])
    out = tmp_path / "tables.md"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["neoweave", "eval", "tables", "run-naive", "--k", "10", "--out", str(out)])
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    assert "| naive | 10 | 1.000 | 0.100 |" in out.read_text(encoding="utf-8")
    assert "with this run's numbers" in out.read_text(encoding="utf-8")


def test_merged_blocks_report_what_one_run_over_their_questions_reports(falkordb_store, embedder, site, tmp_path):
    from neoweave.eval.merge import merge_runs, write_merged
    from neoweave.eval.report import write_report
    from neoweave.eval.runner import Question, RunConfig, run, summarize
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    gold = "https://docs.example.org/tiny/guide/memory.html#garbage-collection"
    questions = [Question(str(i), q, "", [], [gold], type=kind) for i, (q, kind) in enumerate(
        [("What does the garbage collector find?", "a"), ("How is memory freed?", "b"),
         ("What schedules coroutines?", "a"), ("How do I cancel a task?", "b")])]

    def evaluate(chosen, out, **parameters):
        config = RunConfig(["naive", "larag"], [1, 2], bertscore=None, parameters=parameters)
        evaluation = run(falkordb_store, embedder, chosen, config, progress=False)
        write_report(out, evaluation, summarize(evaluation), "block", setup={"neoweave commit": "abc"}, plot=False)
        return summarize(evaluation)

    whole = evaluate(questions, tmp_path / "whole")
    evaluate(questions[:1], tmp_path / "first")
    evaluate(questions[1:], tmp_path / "rest")
    write_merged([tmp_path / "first", tmp_path / "rest"], tmp_path / "merged")
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())
    keys = ("strategy", "k", "type", "questions", "hit", "perfect", "recall", "mrr", "doc_precision", "chunks")
    assert [{key: row.get(key) for key in keys} for row in merged["rows"]] == \
           [{key: row.get(key) for key in keys} for row in whole]
    assert {row["type"] for row in merged["rows"]} == {"all", "a", "b"}
    assert merged["setup"]["questions"] == 4 and "wall_s" not in merged["rows"][0]
    assert "Orion-RAG" in (tmp_path / "merged" / "report.md").read_text()  # the paper tables over all four
    with pytest.raises(NeoweaveError, match="question 0 of naive at k = 1 is in both"):
        merge_runs([tmp_path / "first", tmp_path / "whole"])
    evaluate(questions[1:], tmp_path / "published", larag={"profile": "paper"})
    with pytest.raises(NeoweaveError, match=r"profile neoweave in .* and paper in"):
        merge_runs([tmp_path / "first", tmp_path / "published"])
    with pytest.raises(NeoweaveError, match="two or more"):
        merge_runs([tmp_path / "first"])


def test_blocks_from_before_cached_calls_were_counted_merge_with_newer_ones(tmp_path):
    """Records written before `llm_cached_calls` existed said `llm_cached` of the answer call alone: read as
    `answer_cached`, and the merge has no mean of `llm_cached_calls` that only the newer block counted."""
    from neoweave.eval.merge import merge_runs
    from neoweave.eval.runner import summarize

    def block(name, records):
        (tmp_path / name).mkdir()
        (tmp_path / name / "records.json").write_text(json.dumps(records))
        (tmp_path / name / "summary.json").write_text(json.dumps({"rows": []}))
        return tmp_path / name

    base = {"strategy": "orion", "k": 5, "type": "bridge", "ms": {"llm": 10.0}, "total_ms": 10.0, "llm_calls": 22}
    older = block("older", [{**base, "question_id": "1", "llm_cached": 1.0},
                            {**base, "question_id": "2", "llm_cached": 0.0}])
    newer = block("newer", [{**base, "question_id": "3", "answer_cached": 0.0, "llm_cached_calls": 21}])
    rows = summarize(merge_runs([older, newer])[0])
    assert rows[0]["answer_cached"] == pytest.approx(1 / 3) and "llm_cached_calls" not in rows[0]
    assert summarize(merge_runs([newer, block("newer2", [{**base, "question_id": "4", "answer_cached": 1.0,
                                                          "llm_cached_calls": 22}])])[0])[0]["llm_cached_calls"] == 21.5


def test_a_word_or_phrase_prompt_on_sentence_references_is_warned_of():
    """The Python docs FAQ's references are whole answers: short_answer's "Yes" cannot match them, and the
    measures would blame the strategy."""
    from neoweave.eval.report import report_markdown
    from neoweave.eval.runner import EvalRun, Question, RunConfig, short_prompt_warning

    paragraph = "Because floating point numbers are stored in binary, most decimal fractions are approximated " * 2
    faq = [Question(str(n), "Why are floating-point calculations so inaccurate?", paragraph, [], []) for n in range(3)]
    hotpot = [Question("1", "Which country?", "Estonia", [], []), Question("2", "Who?", "Aurelio Brandt", [], [])]
    warning = short_prompt_warning(faq, RunConfig(["orion", "larag"], [5], answer=True, prompts={"larag": "basic"}))
    assert warning and "median 26 words" in warning and "short_answer asks for a word" in warning
    assert "exact_answer" in short_prompt_warning(faq, RunConfig(["naive"], [5], answer=True, prompt="exact_answer"))
    assert short_prompt_warning(faq, RunConfig(["orion"], [5], answer=True, prompts={"orion": "unified"})) is None
    assert short_prompt_warning(faq, RunConfig(["orion"], [5], answer=False)) is None
    assert short_prompt_warning(hotpot, RunConfig(["orion"], [5], answer=True)) is None
    report = report_markdown("faq", EvalRun([], prompt_warning=warning), [], setup={})
    assert f"**Prompt warning**: {warning}." in report
