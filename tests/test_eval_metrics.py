"""Metrics on hand-computed cases."""

import pytest

from neoweave.eval.metrics import (
    answer_in_context,
    evidence_recall,
    exact_match,
    hit,
    is_insufficient,
    normalize_answer,
    percentile,
    perfect,
    reciprocal_rank,
    token_f1,
)

RETRIEVED = ["C", "A", "C", "D"]  # evidence keys of the retrieved chunks, in rank order


def test_retrieval_metrics():
    assert hit(RETRIEVED, ["A", "B"]) == 1.0 and hit(RETRIEVED, ["B"]) == 0.0
    assert perfect(RETRIEVED, ["A", "D"]) == 1.0 and perfect(RETRIEVED, ["A", "B"]) == 0.0
    assert perfect(RETRIEVED, []) == 0.0
    assert evidence_recall(RETRIEVED, ["A", "B"]) == 0.5
    assert evidence_recall(RETRIEVED, ["A", "C", "D", "E"]) == 0.75
    assert reciprocal_rank(RETRIEVED, ["A", "B"]) == 0.5  # first gold at rank 2
    assert reciprocal_rank(RETRIEVED, ["D"]) == 0.25
    assert reciprocal_rank(RETRIEVED, ["B"]) == 0.0


def test_answer_metrics():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert exact_match("the Eiffel tower.", ["Eiffel Tower"]) == 1.0
    assert exact_match("Paris", ["Lyon", "paris"]) == 1.0 and exact_match("Paris, France", ["Paris"]) == 0.0
    # prediction "paris france" vs gold "paris": precision 1/2, recall 1 -> F1 2/3
    assert token_f1("Paris, France", ["Paris"]) == pytest.approx(2 / 3)
    assert token_f1("yes", ["no"]) == 0.0 and token_f1("", [""]) == 1.0
    assert is_insufficient("Insufficient Information.") == 1.0 and is_insufficient("Paris") == 0.0


def test_answer_in_context_finds_short_answers_on_word_boundaries():
    contexts = ["The Eiffel Tower stands in Paris.", "It opened in 1889, two years late."]
    assert answer_in_context(contexts, ["the eiffel tower"]) == 1.0  # normalised: article and case
    assert answer_in_context(contexts, ["1889"]) == 1.0 and answer_in_context(contexts, ["188"]) == 0.0
    assert answer_in_context(contexts, ["Lyon", "Paris"]) == 1.0  # any alias
    assert answer_in_context(contexts, ["Lyon"]) == 0.0
    # no passage spells out yes/no, and a paragraph-long reference is not expected verbatim
    assert answer_in_context(contexts, ["yes"]) is None and answer_in_context(contexts, [""]) is None
    assert answer_in_context(contexts, ["one two three four five six seven eight nine ten eleven"]) is None
    assert answer_in_context([], ["Paris"]) == 0.0


def test_percentile_nearest_rank():
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 20.0 and percentile(values, 95) == 40.0 and percentile([], 50) == 0.0


def test_rouge_l_is_the_best_lcs_f_measure_over_golds():
    from neoweave.eval.similarity import rouge_l

    # LCS("the cat sat on the mat", "a cat was sitting on the mat") with stemming: cat, on, the, mat = 4
    # precision 4/6, recall 4/7 -> F = 2 * (4/6) * (4/7) / (4/6 + 4/7) = 8/13
    assert rouge_l("The cat sat on the mat", ["A cat was sitting on the mat"]) == pytest.approx(8 / 13)
    assert rouge_l("Paris", ["Lyon", "paris"]) == 1.0  # best gold wins, case-insensitive
    assert rouge_l("", ["Paris"]) == 0.0 and rouge_l("Paris", [""]) == 0.0


def test_bertscore_with_the_bundled_model_ranks_paraphrase_over_unrelated():
    from neoweave.eval.similarity import BertScoreModel, bert_scores

    golds = [["The cat sat on the mat."]] * 3
    same, paraphrase, unrelated = bert_scores(
        ["The cat sat on the mat.", "A cat was sitting on the mat.", "Quarterly revenue rose by nine percent."],
        golds, BertScoreModel())
    assert same == pytest.approx(1.0, abs=1e-4)
    assert same > paraphrase > unrelated
    empty, blank_gold, scored = bert_scores(["", "Paris", "Paris"], [["Paris"], [""], ["Paris"]])
    assert (empty, blank_gold) == (0.0, 0.0) and scored == pytest.approx(1.0, abs=1e-4)  # nothing to compare: 0
    with pytest.raises(ValueError, match="2 predictions but 1 gold lists"):
        bert_scores(["a", "b"], [["a"]])
    assert BertScoreModel().describe() == "all-MiniLM-L6-v2 layer last, no baseline rescaling"
