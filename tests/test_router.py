"""The router: question classes by rules, dispatch with fallbacks on the real store, fitting routes from eval
records, and the fitted routes written to and read from neoweave.toml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ingest_records
from test_iterative import OPERA, QUESTION

from neoweave.config import load_settings
from neoweave.errors import NeoweaveError
from neoweave.eval.router_fit import fit_routes, write_router_config
from neoweave.llm.gateway import StructuredResult
from neoweave.llm.ledger import LLMCall
from neoweave.query import strategy
from neoweave.query.question_types import classify_rules
from neoweave.query.router import Router, configured

HOTPOT = {  # HotpotQA dev questions (their own type in brackets) and the router's class
    "Are Christopher Nolan and Sathish Kalathil both film directors?": "comparison",
    "Which band was formed first The Exies or Circus Diablo ?": "comparison",
    "Who is the oldest, Sid Haig or Vic Darchinyan?": "comparison",
    "Which plant is larger, the Pterocarya or the Cotula?": "comparison",
    "Who directed the film that was shot in or around Leland, North Carolina in 1986": "bridge",
    "At the 2011 census, what was he population of the city where Kerry Saxby-Junna was born?": "bridge",
    "The Women's National Basketball League includes the Adelaide team that was formed in what year?": "temporal",
    "When was the composer of The Silver Lantern born?": "temporal",
    "What are the main themes of the collection?": "abstract",
    "Summarize the documentation of asyncio.": "abstract",
    "If Gallu is a demon Lilu is what?": "single-fact",
    "What is the capital of Estonia?": "single-fact",
}


@pytest.mark.parametrize("question", sorted(HOTPOT))
def test_rules_classify_questions(question):
    assert classify_rules(question) == HOTPOT[question]


@pytest.fixture
def opera(falkordb_store, embedder, tmp_path):
    ingest_records(falkordb_store, embedder, tmp_path / "opera.jsonl", OPERA)
    return falkordb_store


def test_router_dispatches_by_class_and_falls_back_when_the_graph_lacks_a_layer(opera, embedder):
    # "the composer of ..." is a bridge question; its default route (ppr) needs entities this graph lacks
    result = strategy("router", opera, embedder).retrieve("Who was the composer of The Silver Lantern?", k=3)
    routed = result.parameters["routed"]
    assert routed["class"] == "bridge" and routed["route"] == "ppr" and routed["strategy"] == "hybrid"
    assert routed["fallback_reason"] == "the graph has no entities" and len(result.items) == 3
    assert "chunk_bm25" in result.trace.statements  # hybrid's statements are in the router's trace

    chosen = strategy("router", opera, embedder, routes=("bridge=naive", "temporal=larag")).retrieve(QUESTION)
    assert chosen.parameters["routed"]["strategy"] == "naive" and chosen.parameters["routed"]["fallback_reason"] is None
    assert chosen.items[0].doc_id in {"lantern", "brandt"}

    # a route to an LLM strategy with no LLM configured falls back too
    no_llm = strategy("router", opera, embedder, routes=("temporal=recursive",)).retrieve(
        "When was the composer of The Silver Lantern born?")
    assert no_llm.parameters["routed"]["fallback_reason"] == "no LLM"
    assert Router.wants_llm({"routes": ("temporal=recursive",)}) and not Router.wants_llm({})


def test_router_classifies_with_the_llm_when_asked(opera, embedder):
    class Classifier:
        model, concurrency = "scripted", 1

        def structured(self, messages, schema, **kwargs):
            answer = {"type": "Single fact"}
            return StructuredResult(schema.model_validate(answer), json.dumps(answer),
                                    [LLMCall(stage=kwargs["stage"], model="scripted", prompt_tokens=30)])

    result = strategy("router", opera, embedder, Classifier(), classify="llm").retrieve(QUESTION)
    routed = result.parameters["routed"]
    assert routed["class"] == "single-fact" and routed["classified_by"] == "llm"
    assert result.cost.llm_calls == 1 and result.cost.prompt_tokens == 30


@pytest.mark.parametrize(("routes", "message"), [
    (("bridge",), "bad route 'bridge'"), (("nonsense=naive",), "bad route"),
    (("bridge=nope",), "unknown strategy 'nope'"), (("bridge=router",), "to the router itself")])
def test_bad_routes_are_named(opera, embedder, routes, message):
    with pytest.raises(NeoweaveError, match=message):
        strategy("router", opera, embedder, routes=routes).retrieve(QUESTION)


def _record(strategy_name, question, em, tokens, k=5, llm_tokens=0):
    return {"strategy": strategy_name, "k": k, "question_id": question, "question": question, "exact_match": em,
            "context_tokens": tokens, "llm_tokens": llm_tokens}


def test_near_ties_with_answers_go_to_fewer_llm_tokens_not_a_smaller_final_context():
    """An iterative strategy's final context can be small while it read far more over its calls."""
    questions = ["Which band was formed first, A or B?", "Which is larger, the Foo or the Bar?"]
    records = [*(_record("ppr", q, 1, 600, llm_tokens=780) for q in questions),
               *(_record("recursive", q, 1, 530, llm_tokens=1840) for q in questions)]
    assert fit_routes(records).routes == {"comparison": "ppr"}
    without_answers = [{**r, "llm_tokens": 0} for r in records]
    assert fit_routes(without_answers).routes == {"comparison": "recursive"}


def test_fit_picks_the_best_strategy_per_class_and_fewer_tokens_on_near_ties():
    comparison = ["Are A and B both poets?", "Is X or Y older, the Foo or the Bar?"]
    bridge = ["Who directed the film that was shot in Leland?", "Where was the man who founded Acme born?"]
    records = [
        *(_record("naive", q, em, 500) for q, em in zip(comparison, [1, 0], strict=True)),
        *(_record("pank", q, em, 900) for q, em in zip(comparison, [1, 1], strict=True)),
        *(_record("naive", q, em, 500) for q, em in zip(bridge, [1, 0], strict=True)),
        *(_record("ppr", q, em, 520) for q, em in zip(bridge, [1, 0], strict=True)),
        *(_record("pank", q, em, 900) for q, em in zip(bridge, [1, 0], strict=True)),
        _record("router", comparison[0], 0, 10),  # the router's own records never count
        _record("naive", bridge[0], 1, 100, k=2),  # another k: not this fit
    ]
    with pytest.raises(NeoweaveError, match="at least two strategies"):
        fit_routes(records)  # the smallest k (2) holds one strategy only
    fit = fit_routes(records, k=5)
    assert fit.metric == "exact_match" and fit.k == 5
    assert fit.routes == {"comparison": "pank", "bridge": "naive"}  # bridge: a three-way tie, naive is cheapest
    chosen = {(row.question_class, row.strategy) for row in fit.evidence if row.chosen}
    assert chosen == {("comparison", "pank"), ("bridge", "naive")}
    pank_row = next(r for r in fit.evidence if r.strategy == "pank" and r.question_class == "comparison")
    assert pank_row.quality == 1.0 and pank_row.quality_per_1k_tokens == pytest.approx(1000 / 900)
    assert "| comparison | pank | 2 | 1.000 | 900 |" in fit.markdown()
    with pytest.raises(NeoweaveError, match="at least two strategies"):
        fit_routes([r for r in records if r["strategy"] == "naive"], k=5)
    with pytest.raises(NeoweaveError, match="no exact_match or f1 or recall"):
        fit_routes([{"strategy": "naive", "k": 5, "question": "q", "question_id": "q"}])


def test_fitted_routes_are_written_to_the_config_and_read_back(tmp_path):
    path = tmp_path / "neoweave.toml"
    path.write_text('[llm]\nmodel = "qwen2.5-coder-1.5b"\n\n[router]\nroutes = { "bridge" = "kg" }\n\n'
                    '[falkordb]\nef_runtime = 50\n', encoding="utf-8")
    records = [_record("naive", "Are A and B both poets?", 0, 500), _record("pank", "Are A and B both poets?", 1, 900)]
    write_router_config(path, fit_routes(records, source="eval-run"))
    settings = load_settings(path, environ={})
    assert settings.router.routes == {"comparison": "pank"} and settings.falkordb.ef_runtime == 50
    assert settings.llm.model == "qwen2.5-coder-1.5b" and "eval-run" in settings.router.fitted
    assert path.read_text().count("[router]") == 1
    assert configured(settings, "router", {}) == {"routes": ("comparison=pank",)}
    assert configured(settings, "router", {"routes": ("bridge=naive",)}) == {"routes": ("bridge=naive",)}
    assert configured(settings, "naive", {"k": 3}) == {"k": 3}
    fresh = tmp_path / "new.toml"
    write_router_config(fresh, fit_routes(records))
    assert load_settings(fresh, environ={}).router.routes == {"comparison": "pank"}


def test_fit_router_from_the_command_line_writes_the_routes(workdir, monkeypatch, capsys):
    import sys

    from neoweave.cli import main

    run = workdir / "run"
    run.mkdir()
    records = [_record("naive", "Are A and B both poets?", 0, 500), _record("larag", "Are A and B both poets?", 1, 900),
               _record("naive", "What is X?", 1, 500), _record("larag", "What is X?", 1, 900)]
    (run / "records.json").write_text(json.dumps(records), encoding="utf-8")

    def neoweave(*args):
        monkeypatch.setattr(sys, "argv", ["neoweave", *args])
        try:
            main()
        except SystemExit as exc:
            assert not exc.code, capsys.readouterr().err
        return capsys.readouterr().out

    printed = neoweave("eval", "fit-router", "run", "--dry-run")
    assert "| comparison | larag | 1 | 1.000 | 900 | 1.111 | 0 | **yes** |" in printed
    assert not (workdir / "neoweave.toml").exists()
    neoweave("eval", "fit-router", "run")
    assert load_settings(workdir / "neoweave.toml", environ={}).router.routes == {"single-fact": "naive",
                                                                                 "comparison": "larag"}


def test_fit_router_takes_strategies_from_several_runs_but_each_from_one(workdir, monkeypatch, capsys):
    import sys

    from neoweave.cli import main
    from neoweave.eval.compare import load_runs

    for name, right in (("naive", 0), ("larag", 1)):
        run = workdir / f"run-{name}"
        run.mkdir()
        records = [_record(name, "Are A and B both poets?", right, 500 if name == "naive" else 900),
                   _record(name, "What is X?", 1, 500 if name == "naive" else 900)]
        (run / "records.json").write_text(json.dumps(records), encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["neoweave", "eval", "fit-router", "run-naive", "run-larag"])
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    assert load_settings(workdir / "neoweave.toml", environ={}).router.routes == {"single-fact": "naive",
                                                                                 "comparison": "larag"}
    with pytest.raises(NeoweaveError, match="naive at k = 5 is in both run-naive and run-naive"):
        load_runs([Path("run-naive"), Path("run-naive")])


def test_the_llm_free_strategies_are_those_whose_llm_stages_can_be_switched_off():
    """One source (`Strategy.llm_free`) for the parameters that keep a strategy off the LLM: the tests and
    benchmarks that compare strategies without a model take them from the registry."""
    from neoweave.registry import STRATEGIES, llm_free_strategies

    free = llm_free_strategies()
    assert {"naive", "larag", "kg", "ppr", "hybrid", "router", "khl", "orion", "community_local"} <= set(free)
    assert free["khl"] == {"analysis": "fast"} and free["orion"] == {"expand": False, "prune": False}
    for name in STRATEGIES.names():
        cls = STRATEGIES.get(name)
        assert (name in free) == (not cls.wants_llm(cls.llm_free)), name
        if name in free:
            assert set(free[name]) <= set(cls.__dataclass_fields__), name  # real parameters
    assert {"recursive", "pank", "community_global"}.isdisjoint(free)  # their LLM stage is the strategy
