"""Community global search: batches within budget, concurrent map calls, dropping unhelpful points, reduce."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

from neoweave.config import load_settings
from neoweave.enrich import run
from neoweave.errors import NeoweaveError
from neoweave.eval.runner import Question, RunConfig
from neoweave.eval.runner import run as run_eval
from neoweave.llm import create_gateway
from neoweave.llm.gateway import ChatResult, StructuredResult
from neoweave.llm.ledger import LLMCall
from neoweave.query import get_prompt, render, strategy
from neoweave.query.answer import answer
from neoweave.query.community_global import MapAnswer
from neoweave.query.prompts import INSUFFICIENT


class ScriptedAnalyst:
    """Map answers from a script keyed on what the batch holds, for questions about Lothair; the reduce answer
    names the best point (orchestration only: the feature is shown with the real model below and in the
    README's numbers)."""

    model = "scripted"
    concurrency = 2

    def __init__(self, helpful: dict[str, int] | None = None, delay: float = 0.0) -> None:
        self.helpful = helpful or {}
        self.delay = delay
        self.map_prompts: list[str] = []
        self.reduce_prompts: list[str] = []
        self.in_flight = self.most_in_flight = 0
        self._lock = threading.Lock()

    def structured(self, messages, schema, **kwargs):
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.delay)
        text = messages[-1]["content"]
        question = text.rsplit("Question: ", 1)[1]
        points = [{"description": f"The reports say {word} matters.", "score": score}
                  for word, score in self.helpful.items() if word in text and "Lothair" in question]
        answer = {"points": points or [{"description": "I don't know", "score": 0}]}
        with self._lock:
            self.map_prompts.append(text)
            self.in_flight -= 1
        call = LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=len(text) // 4,
                       completion_tokens=30)
        return StructuredResult(schema.model_validate(answer), json.dumps(answer), [call])

    def chat(self, messages, **kwargs):
        text = messages[-1]["content"]
        self.reduce_prompts.append(text)
        best = text.split("- (", 1)[1].split(") ", 1)[1].split("\n")[0] if "- (" in text else INSUFFICIENT
        return ChatResult(best, LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=len(text) // 4,
                                        completion_tokens=8))


@pytest.fixture
def reported(kg_graph, embedder):
    run("communities", kg_graph, embedder=embedder, progress=False, max_cluster_size=6)
    return kg_graph


def _reports(store, level):
    return store.query("MATCH (c:Community) WHERE c.level = $level OR (c.level < $level AND c.children = 0) "
                       "RETURN c.id AS id, c.token_count AS tokens, c.full_report AS text", {"level": level})


def test_map_reduce_drops_unhelpful_points_and_packs_the_best(reported, embedder):
    analyst = ScriptedAnalyst({"Waldrada": 90, "Aachen": 40, "Dropbox": 0, "Python": 3}, delay=0.05)
    search = strategy("community_global", reported, embedder, analyst, map_context_tokens=200, min_score=5)
    result = search.retrieve("Who was the mistress of Lothair II?")
    reports = _reports(reported, search.level)
    # every report of the level was mapped once, in batches within the budget (a report never split)
    mapped = [prompt.count("--- Report ") for prompt in analyst.map_prompts]
    assert sum(mapped) == len(reports) and len(mapped) == result.cost.llm_calls > 1
    for prompt in analyst.map_prompts:  # each batch within map_context_tokens (with its "--- Report N" lines)
        assert sum(r["tokens"] + 5 for r in reports if r["text"].strip() in prompt) <= 200
    assert analyst.most_in_flight == 2  # concurrent map calls, within the gateway's limit
    # points of score 0 and below min_score are dropped; the rest ranked, best first
    scores = [point.score for point in result.points]
    assert scores == sorted(scores, reverse=True) and scores[0] == 90 and min(scores) >= 5
    assert not any("Dropbox" in p.text or "Python" in p.text for p in result.points)
    assert all(point.community_ids and point.token_count for point in result.points)
    assert result.items == [] and result.answer is None
    assert result.context_tokens == sum(p.token_count for p in result.points)
    assert set(result.points[0].community_ids) <= set(result.trace.nodes)
    assert result.cost.prompt_tokens > 0 and "map" in result.cost.milliseconds
    # the same question gets the same batches (seeded shuffle); another seed may batch differently
    again = ScriptedAnalyst({"Waldrada": 90})
    strategy("community_global", reported, embedder, again, map_context_tokens=200).retrieve("Who, Lothair?")
    first = ScriptedAnalyst({"Waldrada": 90})
    strategy("community_global", reported, embedder, first, map_context_tokens=200).retrieve("Who, Lothair?")
    assert sorted(again.map_prompts) == sorted(first.map_prompts)
    order = []  # the shuffle decides which reports go together, in which order
    for seed in (86, 1):
        shuffled = ScriptedAnalyst(delay=0.0)
        shuffled.concurrency = 1
        strategy("community_global", reported, embedder, shuffled, level=7, seed=seed).retrieve("Lothair?")
        order.append(re.findall(r"--- Report \d+\n# (.*)", "".join(shuffled.map_prompts)))
    assert sorted(order[0]) == sorted(order[1]) and order[0] != order[1]
    # the reduce budget keeps the best points that fit
    best = embedder.count_tokens(["- (90) The reports say Waldrada matters."])[0]
    tight = strategy("community_global", reported, embedder, ScriptedAnalyst({"Waldrada": 90, "Aachen": 40}),
                     reduce_context_tokens=best + 2).retrieve("Who was the mistress of Lothair II?")
    assert [p.score for p in tight.points] == [90] and tight.context_tokens == best


def test_reduce_is_the_answer_call_and_nothing_helpful_means_insufficient(reported, embedder):
    analyst = ScriptedAnalyst({"Waldrada": 90})
    search = strategy("community_global", reported, embedder, analyst)
    answered = answer("Who was the mistress of Lothair II?", strategy=search, llm=analyst, prompt="global_reduce")
    assert answered.answer == "The reports say Waldrada matters."
    [reduce_prompt] = analyst.reduce_prompts
    assert reduce_prompt.startswith("Key points from the community reports") and "(none)" not in reduce_prompt
    assert answered.retrieval.cost.llm_calls == len(analyst.map_prompts) + 1  # map calls and the reduce
    # nothing helpful: Insufficient Information, and no reduce call
    silent = ScriptedAnalyst()
    answered = answer("What is the capital of Peru?", strategy=strategy("community_global", reported, embedder),
                      llm=silent, prompt="global_reduce")
    assert answered.answer == INSUFFICIENT and answered.call is None and silent.reduce_prompts == []
    assert answered.retrieval.points == [] and answered.retrieval.cost.llm_calls == len(silent.map_prompts) > 0
    # the key points render in any prompt family (the short-answer prompt for exact-match evaluation)
    user = render(get_prompt("short_answer"), search.retrieve("Who was the mistress of Lothair II?"))[1]["content"]
    assert "- (90) The reports say Waldrada matters." in user


def test_global_search_in_the_evaluation_with_its_token_costs(reported, embedder):
    analyst = ScriptedAnalyst({"Waldrada": 90})
    questions = [Question("q1", "Who was the mistress of Lothair II?", "Waldrada", [], ["k2"]),
                 Question("q2", "What is the capital of Peru?", "Lima", [], ["x"])]
    config = RunConfig(["community_global"], [5], answer=True, bertscore=None)
    evaluation = run_eval(reported, embedder, questions, config, llm=analyst, progress=False)
    first, second = evaluation.records
    assert first["answer"] == "The reports say Waldrada matters." and first["llm_calls"] >= 2
    assert first["llm_tokens"] > 0 and first["context_tokens"] > 0
    assert second["answer"] == INSUFFICIENT and second["insufficient"]


def test_global_search_parameters_and_errors(reported, embedder):
    with pytest.raises(NeoweaveError, match="needs an LLM gateway"):
        strategy("community_global", reported, embedder).retrieve("x")
    with pytest.raises(NeoweaveError, match=r"no community report at level 0 .* rated 11"):
        strategy("community_global", reported, embedder, ScriptedAnalyst(), min_rating=11).retrieve("x")
    deep = ScriptedAnalyst()  # a level deeper than any: the leaves (communities not split further)
    strategy("community_global", reported, embedder, deep, level=7).retrieve("Lothair?")
    leaves = reported.query("MATCH (c:Community) WHERE c.children = 0 RETURN count(c) AS n")[0]["n"]
    assert sum(p.count("--- Report ") for p in deep.map_prompts) == leaves
    with pytest.raises(NeoweaveError, match="map_context_tokens"):
        strategy("community_global", reported, embedder, ScriptedAnalyst(), map_context_tokens=0).retrieve("x")
    # max_reports maps only the reports closest to the question
    analyst = ScriptedAnalyst()
    strategy("community_global", reported, embedder, analyst, max_reports=1).retrieve("Lothair II and Waldrada")
    assert sum(p.count("--- Report ") for p in analyst.map_prompts) == 1
    assert "Lothair" in analyst.map_prompts[0] or "Waldrada" in analyst.map_prompts[0]
    assert MapAnswer.model_validate({"points": [{"description": "d", "score": "0.85"}]}).points[0].score == 85
    assert MapAnswer.model_validate({"points": ["bare"]}).points[0].score == 50


def test_leaf_or_top_maps_the_level_whose_reports_match_the_question(reported, embedder):
    """PankRAG's multi-scale choice: the leaf level when a leaf report matches the question best, the top level
    when a top report does (a report whose vector is the question's own is added at that level, so the choice is
    known)."""
    levels = {row["level"] for row in reported.query("MATCH (c:Community) WHERE c.full_report IS NOT NULL "
                                                     "RETURN DISTINCT c.level AS level")}
    top, leaf = min(levels), max(levels)
    assert top < leaf  # the fixture's graph has a hierarchy
    detail, theme = "Who was the mistress of Lothair II?", "What do these documents say about kingdoms?"
    for question, level in ((detail, leaf), (theme, top)):
        reported.query("CREATE (:Community {id: $id, level: $level, children: 0, title: $q, full_report: $q, "
                       "rating: 5.0, token_count: 12, embedding: vecf32($v)})",
                       {"id": f"community:{level}:test", "level": level, "q": question,
                        "v": embedder.embed_query(question)}, write=True)
        analyst = ScriptedAnalyst()
        result = strategy("community_global", reported, embedder, analyst, level_choice="leaf_or_top",
                          choice_reports=1).retrieve(question)
        assert result.parameters["level_choice"] == "leaf_or_top"
        choice = result.parameters["chosen_level"]
        assert (choice["level"], choice["top"], choice["leaf"]) == (level, top, leaf), str(choice)
        assert choice[f"{'leaf' if level == leaf else 'top'}_score"] == pytest.approx(1.0, abs=1e-4)
        assert sum(p.count("--- Report ") for p in analyst.map_prompts) == len(_reports(reported, level))
    fixed = strategy("community_global", reported, embedder, ScriptedAnalyst()).retrieve(detail)
    assert "chosen_level" not in fixed.parameters  # the default maps `level` (0) and chooses nothing
    with pytest.raises(NeoweaveError, match="level_choice must be one of fixed, leaf_or_top"):
        strategy("community_global", reported, embedder, ScriptedAnalyst(), level_choice="leaf").retrieve("x")


def test_global_search_with_the_local_model(reported, embedder, llm_data_dir, model_dir):
    llm_settings = {"model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": llm_settings})
    llm = create_gateway(settings)
    answered = answer("Who was the mistress of Lothair II?", llm=llm, prompt="short_answer", max_tokens=20,
                      strategy=strategy("community_global", reported, embedder, llm, max_reports=2,
                                        map_max_tokens=200))
    cost = answered.retrieval.cost
    assert cost.llm_calls >= 1 and cost.prompt_tokens > 100
    assert llm.ledger.totals(stage="query:community_global:map").calls >= 1
    # the 0.5B model's points vary; either it found some (then it answered from them) or it said so
    assert answered.answer
    assert answered.retrieval.points or answered.answer == INSUFFICIENT
