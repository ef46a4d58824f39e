"""The LLM judge: its arithmetic and orchestration on hand-made verdicts (a scripted double stands in for the
model there, and only there), then the real local model judging a tiny run end to end."""

from __future__ import annotations

import json

import pytest

from neoweave.errors import NeoweaveError
from neoweave.eval.judge import Judge, average_precision
from neoweave.eval.pairwise import answer_pairs, pairwise_markdown, pairwise_win_rates
from neoweave.llm.gateway import StructuredResult
from neoweave.llm.ledger import LLMCall


class ScriptedJudgeModel:
    """Answers every structured call with the next scripted object (orchestration tests only)."""

    model = "scripted"

    def __init__(self, answers):
        self.answers = list(answers)
        self.stages: list[str] = []

    def structured(self, messages, response_model, *, stage, max_tokens=None):
        self.stages.append(stage)
        value = response_model.model_validate(self.answers.pop(0))
        return StructuredResult(value, json.dumps(self.answers), [LLMCall(stage, self.model, 100, 20)])


def test_average_precision_by_hand():
    assert average_precision([True, False, True]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision([False, True]) == pytest.approx(0.5)
    assert average_precision([False, False]) == 0.0


def test_measures_turn_verdicts_into_scores(embedder):
    model = ScriptedJudgeModel([
        {"claims": [{"claim": "Paris is in France", "supported": True}, {"claim": "It has 9 M people",
                                                                            "supported": False}]},
        {"statements": [{"statement": "a", "attributed": True}, {"statement": "b", "attributed": True},
                        {"statement": "c", "attributed": False}, {"statement": "d", "attributed": True}]},
        {"verdicts": [{"passage": 2, "useful": True}, {"passage": 1, "useful": False}]},
        {"true_positive": ["x"], "false_positive": ["y"], "false_negative": []},
        {"questions": ["What is the capital of France?"], "noncommittal": True},
    ])
    judge = Judge(model, embedder, answer_model="scripted")
    assert judge.judges_itself
    faith = judge.faithfulness("q", "a", ["ctx"])
    assert faith.score == 0.5 and "- It has 9 M people" in faith.rationale and faith.tokens == 120
    assert judge.context_recall("q", "ref", ["ctx"]).score == 0.75
    assert judge.context_precision("q", "ref", ["one", "two", "three"]).score == pytest.approx(0.5)  # useful at 2
    correct = judge.answer_correctness("q", "Paris", "Paris")
    assert correct.details["factual_f1"] == pytest.approx(1 / (1 + 0.5))
    assert correct.score == pytest.approx(0.5 * correct.details["factual_f1"] + 0.5 * correct.details["similarity"])
    assert correct.details["similarity"] == pytest.approx(1.0, abs=1e-5)  # the same text
    assert judge.answer_relevance("What is the capital of France?", "I don't know").score == 0.0  # evasive
    assert model.stages == ["judge:faithfulness", "judge:context_recall", "judge:context_precision",
                            "judge:answer_correctness", "judge:answer_relevance"]


def test_reference_free_precision_and_sentence_relevancy(embedder):
    model = ScriptedJudgeModel([
        {"verdicts": [{"passage": 1, "useful": False}, {"passage": 3, "useful": True}]},
        {"sentences": [2, 2, 9]},  # a number given twice counts once, one that names no sentence not at all
    ])
    judge = Judge(model, embedder)
    precision = judge.judge("context_precision_without_reference", question="q", answer="Paris", reference="",
                            contexts=["one", "two", "three"])
    assert precision.score == pytest.approx(1 / 3)  # the only useful passage is at rank 3
    contexts = ["Paris is the capital. It lies on the Seine.", "Lyon is a city. It has silk."]
    relevancy = judge.judge("context_relevancy", question="What is the capital?", answer="", reference="",
                            contexts=contexts)
    assert relevancy.score == 0.25 and relevancy.details == {"sentences": 4, "relevant": 1}  # eq. 8: 1 of 4
    assert relevancy.rationale == "It lies on the Seine."
    assert judge.context_relevancy("q", []).score is None  # no context: nothing to judge, no call
    assert model.stages == ["judge:context_precision_without_reference", "judge:context_relevancy"]


def test_pairwise_swaps_positions_and_counts_flips(embedder):
    # a judge that always prefers whatever it sees first: every verdict flips, and A's rate is 50 %
    biased = ScriptedJudgeModel([{"winner": "1", "reason": "first"}] * 4)
    records = [{"strategy": s, "k": 5, "question_id": str(i), "question": f"q{i}", "answer": f"{s} {i}"}
               for s in ("naive", "larag") for i in range(2)]
    pairs = answer_pairs(records, "naive", "larag", None)
    result = pairwise_win_rates(Judge(biased, embedder), pairs, criteria=("comprehensiveness",), progress=False)
    row = result["rows"][0]
    assert row["judged"] == 2 and row["a_win_rate"] == 0.5 and row["flip_rate"] == 1.0
    assert row["first_shown_win_rate"] == 1.0  # the bias's direction: the first shown always won
    assert "| comprehensiveness | 2 | 50 % | 50 % | 100 % | 100 % |" in pairwise_markdown(result, "naive", "larag")
    consistent = ScriptedJudgeModel([{"winner": "2"}, {"winner": "1"}] * 2)  # B both ways round
    row = pairwise_win_rates(Judge(consistent, embedder), pairs, criteria=("comprehensiveness",),
                             progress=False)["rows"][0]
    assert row["b_win_rate"] == 1.0 and row["flip_rate"] == 0.0 and row["first_shown_win_rate"] == 0.5
    # B from another run over the same questions, even under the same strategy name (before / after a change)
    later = [{**r, "answer": r["answer"] + " (later)"} for r in records if r["strategy"] == "naive"]
    across = answer_pairs(records, "naive", "naive", None, later)
    assert [(a["answer"], b["answer"]) for a, b in across] == [("naive 0", "naive 0 (later)"),
                                                               ("naive 1", "naive 1 (later)")]
    with pytest.raises(NeoweaveError, match="the B run has no answers of strategy 'larag'"):
        answer_pairs(records, "naive", "larag", None, later)
    with pytest.raises(NeoweaveError, match="no question was answered by both"):
        answer_pairs(records, "naive", "naive", None, [{**r, "question_id": "other"} for r in later])


def test_the_local_model_judges_a_tiny_run(cli_env_run):
    report, records = cli_env_run
    assert "**Judge warning**" in report  # the 0.5B judged its own answers: said so
    record = records[0]
    verdict = record["judge"]["faithfulness"]
    assert verdict["calls"] >= 1 and verdict["tokens"] > 50
    assert verdict["score"] is None or 0.0 <= verdict["score"] <= 1.0  # the small model may give nothing usable
    assert verdict["score"] is not None or verdict["error"]
    assert 0.0 <= record["answer_similarity"] <= 1.0
    assert record["cost_usd"] == pytest.approx((record["prompt_tokens"] * 1.0 + record["completion_tokens"] * 2.0)
                                               / 1e6) and record["prompt_tokens"] > 50


@pytest.fixture
def cli_env_run(tmp_path, site, model_dir):
    from neoweave.config import load_settings
    from neoweave.eval.runner import RunConfig
    from neoweave.kb import evaluate
    from neoweave.llm.local import MODELS, LocalModelServer
    from neoweave.store.falkordb_server import EmbeddedFalkorDB

    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "gc", "question": "What does the cyclic garbage collector find?",
                              "answer": "reference cycles", "evidence": [
                                  "https://docs.example.org/tiny/guide/memory.html#garbage-collection"]}) + "\n")
    data_dir = tmp_path / "data"
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": data_dir}, "llm": {
        "model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir,
        "prices": {"qwen2.5-coder-0.5b": (1.0, 2.0)}}})  # USD per 1M tokens, for the $ per question
    config = RunConfig(["naive"], [2], answer=True, max_tokens=24, bertscore=None, judge=["faithfulness"])
    try:
        outcome = evaluate(settings, qa, config, tmp_path / "out", corpus=site,
                           base_url="https://docs.example.org/tiny/", progress=False)
        yield outcome.report.read_text(), json.loads((tmp_path / "out" / "records.json").read_text())
    finally:
        LocalModelServer(MODELS["qwen2.5-coder-0.5b"], state_dir=data_dir / "llm").stop()
        EmbeddedFalkorDB(data_dir).stop()
