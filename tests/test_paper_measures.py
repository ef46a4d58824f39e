"""Each seed paper's measures against values computed by hand from its equations (KHL-RAG eq. 12-17, Orion-RAG's
precision@k, PankRAG eq. 8, the thesis's retrieval BERTScore on a real graph and model)."""

from __future__ import annotations

import json

import pytest

from neoweave.eval import analysis, measures
from neoweave.eval.paper_measures import (
    khl_answer_correctness,
    khl_answer_relevance,
    khl_context_recall,
    khl_scores,
    khl_token_f1,
    orion_precision_at_k,
    sentence_share,
    token_set,
)
from neoweave.eval.similarity import answer_similarity


def test_khl_measures_by_hand():
    prediction, reference = "The Eiffel Tower, in Paris.", "Paris, France"
    assert token_set(prediction) == {"the", "eiffel", "tower", "in", "paris"}  # a set: case and punctuation go
    # eq. 12: |G & P| / |G| = |{paris}| / |{paris, france}|
    assert khl_context_recall(prediction, reference) == 0.5
    # eq. 15-16: recall 1/2, precision 1/5 -> 2 * 0.1 / 0.7
    assert khl_token_f1(prediction, reference) == pytest.approx(2 / 7)
    # eq. 14, alpha 0.5: 0.5 * A-Sim + 0.5 * F1
    assert khl_answer_correctness(0.8, prediction, reference) == pytest.approx(0.4 + 1 / 7)
    assert khl_answer_correctness(0.8, prediction, reference, alpha=1.0) == pytest.approx(0.8)
    # eq. 17: |Q & P| / |Q| = |{the, eiffel, tower}| / |{where, is, the, eiffel, tower}|
    assert khl_answer_relevance(prediction, "Where is the Eiffel Tower?") == pytest.approx(3 / 5)
    assert khl_scores(prediction, reference, "Where is the Eiffel Tower?", 0.8) == pytest.approx(
        {"khl_c_rec": 0.5, "khl_a_corr": 0.4 + 1 / 7, "khl_a_rel": 0.6})


class _FixedVectors:
    """Hand-picked vectors for the texts, so eq. 13 can be computed by hand (the formula, not a model, is tested)."""

    def __init__(self, vectors: dict[str, list[float]]):
        self.vectors = vectors

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[text] for text in texts]


def test_khl_answer_similarity_is_the_cosine_of_eq_13():
    embedder = _FixedVectors({"Paris": [3.0, 4.0], "Paris, France": [1.0, 0.0], "Lyon": [-3.0, -4.0],
                              "Rome": [0.0, 0.0]})
    # e_g . e_p / (|e_g| |e_p|) = 3 / (5 * 1): the norms divide, whether or not an embedder normalises
    assert answer_similarity(embedder, "Paris", "Paris, France") == pytest.approx(0.6)
    assert answer_similarity(embedder, "Lyon", "Paris") == pytest.approx(-1.0)  # opposite: negative, not clipped
    assert answer_similarity(embedder, "Rome", "Paris") == 0.0  # a zero vector has no direction
    # A-Corr (eq. 14) takes that cosine: 0.5 * 0.6 + 0.5 * F1, F1 of {paris} against {paris, france} = 2/3
    assert khl_answer_correctness(0.6, "Paris", "Paris, France") == pytest.approx(0.3 + 1 / 3)


def test_khl_measures_at_their_edges():
    assert khl_context_recall("paris paris", "Paris") == 1.0 and khl_token_f1("paris paris", "Paris") == 1.0  # sets
    assert khl_token_f1("London", "Paris") == 0.0  # no overlap: both terms 0, F1 defined 0
    assert khl_context_recall("Paris", "") == 0.0 and khl_answer_relevance("Paris", "?") == 0.0  # empty denominator
    assert khl_token_f1("", "Paris") == 0.0
    with pytest.raises(ValueError, match="alpha"):
        khl_answer_correctness(0.5, "a", "a", alpha=1.5)


def test_orion_precision_divides_by_k():
    assert orion_precision_at_k(["a", "b", "a"], ["a"], 5) == pytest.approx(2 / 5)  # two chunks of a, k = 5
    assert orion_precision_at_k(["a", "b", "a"], ["a"], 2) == pytest.approx(1 / 2)  # the first k only
    assert orion_precision_at_k([], ["a"], 3) == 0.0
    with pytest.raises(ValueError, match="k must be"):
        orion_precision_at_k(["a"], ["a"], 0)
    page = "https://docs.example.org/guide/async.html"
    retrieved = [f"{page}#tasks", "https://docs.example.org/other.html#x"]
    # asked for 5, two came back, one from the gold page: 1 / 5, not 1 / 2
    assert measures.retrieval_scores(retrieved, [f"{page}#event-loop"], 5)["doc_precision"] == pytest.approx(0.2)
    assert measures.document_precision(retrieved, [f"{page}#event-loop"]) == pytest.approx(0.5)  # k = returned


def test_pankrag_context_recall_is_a_share_of_sentences():
    assert sentence_share(2, 8) == 0.25 and sentence_share(0, 0) == 0.0
    with pytest.raises(ValueError):
        sentence_share(3, 2)


def test_larag_correlates_bertscore_f1_with_prompt_plus_output_tokens():
    records = [{"strategy": "larag", "k": 5, "gold": "a", "answer": "b", "f1": 0.5, "bertscore": 1 - n / 10,
                "prompt_tokens": 100 * n, "completion_tokens": 10, "context_tokens": 7, "total_ms": 5.0}
               for n in range(1, 7)]
    row = analysis.answer_analysis(records)[0]
    assert row["measure"] == "bertscore"  # LARAG's F1 is BERTScore F1 (000 l. 306)
    assert row["pearson_total_tokens"] == pytest.approx(-1.0) and row["spearman_total_tokens"] == pytest.approx(-1.0)
    assert row["pearson_context_tokens"] is None  # constant
    del records[0]["bertscore"]
    assert analysis.answer_analysis(records)[0]["measure"] == "f1"  # not every answer has it: token F1


def test_thesis_retrieval_bertscore_against_the_ground_truth_context(falkordb_store, embedder, site):
    from neoweave.eval.ground_truth import ground_truth_contexts
    from neoweave.eval.runner import Question, RunConfig, run
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(base_url="https://docs.example.org/tiny/"),
                                                     progress=False)).ingest(site)
    gold = "https://docs.example.org/tiny/guide/memory.html#garbage-collection"
    questions = [Question("stored", "What does the garbage collector find?", "", [], [gold]),
                 Question("given", "What does the garbage collector find?", "", [], [gold],
                          evidence_text=["The collector finds reference cycles."]),
                 Question("nothing", "How do I cancel a task?", "", [], ["https://nowhere.example/#x"])]
    truths = ground_truth_contexts(falkordb_store.run, questions)
    assert "cycle" in truths["stored"].lower() and truths["given"] == "The collector finds reference cycles."
    assert truths["nothing"] == ""  # a key that names nothing stored gives no ground truth
    evaluation = run(falkordb_store, embedder, questions, RunConfig(["naive"], [2], bertscore=None,
                                                                    context_bertscore=True), progress=False)
    by_id = {r["question_id"]: r for r in evaluation.records}
    for qid in ("stored", "given"):
        record = by_id[qid]
        assert 0 < record["context_bertscore_p"] <= 1 and 0 < record["context_bertscore_r"] <= 1
        p, r = record["context_bertscore_p"], record["context_bertscore_r"]
        assert record["context_bertscore_f1"] == pytest.approx(2 * p * r / (p + r), abs=1e-4)  # eq. 4.4
    assert "context_bertscore_f1" not in by_id["nothing"] and "_contexts" not in by_id["nothing"]
    # the retrieved chunk is the gold section itself: its text covers the stored ground truth better than the
    # one-sentence paraphrase covers it
    assert by_id["stored"]["retrieved"][0]["evidence"] == gold
    # the context holds the gold section itself: the stored ground truth is covered closely (recall 0.92 here),
    # the one-sentence paraphrase less so (0.70), and the paraphrase is a small part of the context (precision)
    assert by_id["stored"]["context_bertscore_r"] > 0.85 > by_id["given"]["context_bertscore_r"]
    assert by_id["stored"]["context_bertscore_p"] > by_id["given"]["context_bertscore_p"] + 0.2
    assert evaluation.bertscore_model and "no baseline rescaling" in evaluation.bertscore_model


def _bert_score_library(candidates, references):
    bert_score = pytest.importorskip("bert_score")
    from transformers import AutoConfig

    from neoweave.embeddings import model_location

    location = model_location("all-MiniLM-L6-v2")
    p, r, f = bert_score.score(candidates, references, model_type=location,
                               num_layers=AutoConfig.from_pretrained(location).num_hidden_layers, verbose=False)
    return [(float(a), float(b), float(c)) for a, b, c in zip(p, r, f, strict=True)]


def test_bertscore_is_bert_scores_own_where_the_texts_fit():
    from neoweave.eval.similarity import bert_scores_prf

    candidates = ["The garbage collector finds reference cycles and frees them.", "Paris", "asyncio.run"]
    references = [["Python's cyclic garbage collector detects reference cycles."],
                  ["The capital of France is Paris.", "Paris, France"],  # several golds: the best of each column
                  ["Use asyncio.run() to start the event loop."]]
    ours = bert_scores_prf(candidates, references)
    assert ours == [pytest.approx(row, abs=1e-5) for row in _bert_score_library(candidates, references)]
    assert bert_scores_prf(["", "Paris"], [["Paris"], [" "]]) == [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)]


def test_bertscore_counts_every_word_piece_of_a_long_context():
    from neoweave.eval.similarity import bert_scores_prf

    filler = " ".join(["The river winds through the valley past old mills and quiet farms."] * 60)  # ~900 pieces
    evidence = "Python's cyclic garbage collector detects reference cycles and frees unreachable objects."
    long_context = f"{filler} {evidence}"
    (p, r, f1), = bert_scores_prf([long_context], [[evidence]])
    (_, r_cut, _), = _bert_score_library([long_context], [[evidence]])
    # eq. 4.3 averages over the ground truth's tokens, each matched anywhere in the context: the evidence at the
    # end is found; cut at 512 word pieces, the context is filler only
    assert r > 0.6 and r > r_cut + 0.4  # here 0.68 against 0.14
    assert p < 0.3  # eq. 4.2: the filler's pieces match the evidence poorly and are averaged in
    assert f1 == pytest.approx(2 * p * r / (p + r))
    assert bert_scores_prf([long_context], [[long_context]]) == [pytest.approx((1.0, 1.0, 1.0))]


def test_multihop_rag_keeps_the_facts_as_evidence_text(tmp_path):
    from neoweave.eval.datasets.multihop_rag import convert_multihop_rag
    from neoweave.eval.runner import load_qa

    corpus, questions = tmp_path / "corpus.json", tmp_path / "MultiHopRAG.json"
    corpus.write_text(json.dumps([{"title": "T", "body": "B", "url": "u"}]))
    questions.write_text(json.dumps([{"query": "Q?", "answer": "A", "question_type": "inference_query",
                                      "evidence_list": [{"title": "T", "fact": "F one."},
                                                        {"title": "T", "fact": "F two."}]}]))
    converted = convert_multihop_rag(corpus, questions, tmp_path / "out")
    [question] = load_qa(converted.qa_path)
    assert question.evidence == ["T"] and question.evidence_text == ["F one.", "F two."]


def test_record_corpora_give_their_gold_documents_text_by_title(falkordb_store, embedder, tmp_path):
    from neoweave.eval.ground_truth import ground_truth_contexts
    from neoweave.eval.runner import Question
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(row) for row in [
        {"id": "a", "title": "Demon Dice", "text": "Demon Dice is a collectible dice game by Lester Smith."},
        {"id": "b", "title": "Dragon Dice", "text": "Dragon Dice is a fantasy dice game."}]) + "\n")
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(corpus)
    truths = ground_truth_contexts(falkordb_store.run, [Question("q", "Who made Demon Dice?", "", [],
                                                                 ["Dragon Dice", "Demon Dice"])])
    # in the question's evidence order, each document's whole text
    assert truths == {"q": "Dragon Dice is a fantasy dice game.\n\nDemon Dice is a collectible dice game by "
                           "Lester Smith."}


def test_bertscore_model_option_names_a_bad_directory(tmp_path):
    from neoweave.cli.evaluation import _bertscore_model
    from neoweave.errors import NeoweaveError

    with pytest.raises(NeoweaveError, match=r"--bertscore-model .*not a model directory"):
        _bertscore_model(str(tmp_path / "roberta-large"), 17)
    (tmp_path / "roberta-large").mkdir()
    (tmp_path / "roberta-large" / "config.json").write_text("{}")
    model = _bertscore_model(str(tmp_path / "roberta-large"), 17)
    assert model.name == str(tmp_path / "roberta-large") and model.layer == 17
    assert "layer 17, no baseline rescaling" in model.describe()
    with pytest.raises(NeoweaveError, match="--bertscore-layer"):
        _bertscore_model(None, 0)


def test_rescore_an_earlier_run_with_the_papers_formulas(tmp_path, capsys, monkeypatch):
    import sys

    from neoweave.cli import main

    run = tmp_path / "run"
    run.mkdir()
    records = [{"strategy": "naive", "k": 5, "question_id": "q1", "type": "bridge", "question": "Where is the Eiffel "
                "Tower?", "answer": "The Eiffel Tower, in Paris.", "gold": "Paris, France", "answer_similarity": 0.8,
                "khl_c_rec": 0.9, "doc_precision": 1.0,
                "retrieved": [{"evidence": "Paris"}, {"evidence": "Lyon"}]},  # asked for 5, two came back
               {"strategy": "naive", "k": 5, "question_id": "q2", "type": "comparison", "question": "?",
                "answer": "x", "gold": "x", "answer_similarity": 1.0, "doc_precision": 0.0, "retrieved": []}]
    rows = [{"strategy": "naive", "k": 5, "type": kind, "questions": 1, "khl_c_rec": 0.9, "wall_s": 3.0}
            for kind in ("all", "bridge")]
    (run / "records.json").write_text(json.dumps(records))
    (run / "summary.json").write_text(json.dumps({"title": "old", "rows": rows, "bertscore_model": None}))
    qa = tmp_path / "qa.jsonl"
    qa.write_text("\n".join(json.dumps({"id": qid, "question": "?", "answer": "", "evidence": ["Paris"]})
                            for qid in ("q1", "q2")) + "\n")
    monkeypatch.setattr(sys, "argv", ["neoweave", "eval", "rescore", str(run), "--qa", str(qa)])
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    assert "2 record(s)" in capsys.readouterr().out
    first, second = json.loads((run / "records.json").read_text())
    assert second["khl_c_rec"] == 1.0 and second["doc_precision"] == 0.0  # "x" for "x"; nothing retrieved
    assert first["khl_c_rec"] == 0.5 and first["khl_a_rel"] == pytest.approx(3 / 5)  # as in the hand example
    assert first["doc_precision"] == pytest.approx(1 / 5)  # one gold chunk, divided by k = 5
    summary = json.loads((run / "summary.json").read_text())
    by_type = {row["type"]: row for row in summary["rows"]}
    assert by_type["all"]["khl_c_rec"] == pytest.approx((0.5 + 1.0) / 2) and by_type["bridge"]["khl_c_rec"] == 0.5
    assert by_type["all"]["wall_s"] == 3.0 and summary["title"] == "old"  # the rest is kept
    assert not list(run.glob("*.tmp"))


def test_paper_tables_put_a_strategy_as_published_beside_its_defaults(tmp_path):
    from neoweave.eval.paper_tables import tables_from_runs
    from neoweave.eval.report import markdown_table

    for profile, precision in (("neoweave", 0.4), ("paper", 0.2)):
        run = tmp_path / profile
        run.mkdir()
        rows = [{"strategy": "larag", "k": 5, "type": "all", "questions": 2, "profile": profile, "doc_hit": 1.0,
                 "doc_precision": precision}]
        (run / "summary.json").write_text(json.dumps({"title": profile, "rows": rows}))
        (run / "records.json").write_text(json.dumps([{"strategy": "larag", "k": 5, "question_id": q,
                                                       "profile": profile} for q in ("q1", "q2")]))
    text = tables_from_runs([tmp_path / "neoweave", tmp_path / "paper"])
    assert "| larag | 5 | 1.000 | 0.400 |" in text and "| larag (as published) | 5 | 1.000 | 0.200 |" in text
    both = [{"strategy": "larag", "k": 5, "type": "all", "profile": p, "hit": 1.0} for p in ("neoweave", "paper")]
    assert markdown_table(both).startswith("| strategy | profile | k |")
    assert "profile" not in markdown_table(both[:1])  # only when a row is not the default
