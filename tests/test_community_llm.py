"""LLM community reports: the bounded context, sub-reports for large communities, fallbacks, the local model."""

from __future__ import annotations

import json

from neoweave.config import load_settings
from neoweave.enrich import run
from neoweave.enrich.community_reports import MemberEntity, MemberRelation, ReportContext, SourceChunk
from neoweave.enrich.community_reports_llm import ChildReport, LLMReporter, ReportAnswer
from neoweave.enrich.leiden import Community
from neoweave.llm import create_gateway
from neoweave.llm.gateway import StructuredResult
from neoweave.llm.ledger import LLMCall


class ScriptedReports:
    """Writes a report naming the first entity of the prompt; fails on prompts containing `fail_on`
    (orchestration tests only: the reports themselves are shown with the real model below)."""

    model = "scripted"
    concurrency = 2

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.prompts: list[str] = []

    def structured(self, messages, schema, **kwargs):
        text = messages[-1]["content"]
        self.prompts.append(text)
        call = LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=len(text) // 4,
                       completion_tokens=40, latency_ms=5.0)
        if self.fail_on and self.fail_on in text:
            return StructuredResult(None, "{broken", [call], error="invalid structured output")
        first = text.split("\n- ", 1)[1].split(":")[0].split(" (")[0] if "\n- " in text else "nothing"
        answer = {"title": f"About {first}", "summary": f"A community around {first}.",
                  "findings": [{"summary": f"{first} matters", "explanation": "Because the input says so."}],
                  "rating": "8/10", "rating_explanation": "Many facts."}
        return StructuredResult(schema.model_validate(answer), json.dumps(answer), [call])


def _context(members: int, relations: int, chunk_words: int = 60) -> ReportContext:
    entities = [MemberEntity(f"e{i}", f"Entity number {i}", "person", f"described at length {i} " * 5, 10 - i % 10)
                for i in range(members)]
    rels = [MemberRelation(f"e{i % members}", f"e{(i + 1) % members}", "knows", f"they met in year {1900 + i}",
                           float(relations - i), [f"c{i % 3}"]) for i in range(relations)]
    chunks = [SourceChunk(f"c{i}", " ".join(f"word{i}x{j}" for j in range(chunk_words)), [1.0, i * 0.1], 3 - i)
              for i in range(3)]
    return ReportContext(Community("community:0:big", 0, tuple(e.id for e in entities)), entities, rels, chunks)


def test_report_context_stays_in_budget_and_uses_sub_reports_when_too_large():
    reporter = LLMReporter(ScriptedReports(), context_tokens=400)
    small = _context(members=4, relations=3)
    prompt = reporter.prompt(small, [])
    assert "Entities:\n- Entity number" in prompt.text and "Relations:" in prompt.text and prompt.chunk_ids
    assert "Sub-community reports" not in prompt.text
    big = _context(members=40, relations=80)
    children = [ChildReport("community:1:a", "The first group", "Entities 0 to 19.", ["e0 knows e1"],
                            tuple(f"e{i}" for i in range(20))),
                ChildReport("community:1:b", "The second group", "Entities 20 to 39.", [],
                            tuple(f"e{i}" for i in range(20, 40)))]
    without = reporter.prompt(big, [])
    with_children = reporter.prompt(big, children)
    for prompt in (without, with_children):
        assert len(prompt.text) / 4 <= 400 + 10  # the budget (about four characters a token)
    assert with_children.text.startswith("Sub-community reports:\n## The first group")
    assert with_children.children_used == ["community:1:a", "community:1:b"]
    # members covered by a sub-report are not listed again
    assert "- Entity number 3 (person)" in without.text and "- Entity number 3 (person)" not in with_children.text
    # a sub-report filling most of its three quarters leaves raw context only the rest of the budget
    long = ChildReport("community:1:c", "A long report", "word " * 220, [], tuple(f"e{i}" for i in range(10)))
    packed = reporter.prompt(big, [long])
    assert packed.children_used == ["community:1:c"] and len(packed.text) / 4 <= 400 + 10


def test_model_answers_are_normalised():
    answer = ReportAnswer.model_validate({"title": "T", "summary": "S", "findings": ["bare finding"],
                                          "rating": 85})
    assert answer.rating == 8.5 and answer.findings[0].summary == "bare finding"
    assert ReportAnswer.model_validate({"title": "T", "summary": "S", "rating": "7/10"}).rating == 7.0
    assert ReportAnswer.model_validate({"title": "T", "summary": "S", "rating": -3}).rating == 0.0
    for odd in (None, "nan", {"value": 3}, "high"):  # the middle of the scale, never a crash or NaN
        assert ReportAnswer.model_validate({"title": "T", "summary": "S", "rating": odd}).rating == 5.0


def test_llm_reports_in_the_graph_with_fallback_and_rerun(kg_graph, embedder):
    store = kg_graph
    llm = ScriptedReports(fail_on="Guido van Rossum")
    report = run("communities", store, embedder=embedder, llm=llm, method="llm", progress=False,
                 max_cluster_size=6, llm_context_tokens=200)
    rows = store.query("MATCH (c:Community) RETURN c.id AS id, c.level AS level, c.method AS method, "
                       "c.title AS title, c.rating AS rating, c.full_report AS full_report, "
                       "c.embedding IS NOT NULL AS embedded ORDER BY id")
    failed = [r for r in rows if r["method"] == "fast"]
    answered = [r for r in rows if r["method"] == "llm"]
    assert failed and answered and len(failed) == report.counters["llm_fallbacks"] == len(report.failures)
    assert all(r["title"].startswith("About ") and r["rating"] == 8.0 and r["embedded"] for r in answered)
    assert all("Because the input says so." in r["full_report"] for r in answered)
    assert report.llm_calls == len(rows) and report.prompt_tokens > 0
    levels = {r["level"] for r in rows}
    assert sum(report.counters[f"level_{level}_llm_calls"] for level in levels) == len(rows)
    assert all(f"reports_level_{level}" in report.phase_seconds for level in levels)
    # the deeper level was written first, and its parent (over budget) was built from its sub-reports
    assert report.counters.get("reports_from_sub_reports", 0) >= 1
    assert any(p.startswith("Sub-community reports:\n## About ") for p in llm.prompts)
    assert {r["source"] for r in store.query("MATCH (c:Community) RETURN c.report_source AS source")} == {
        "communities@1:fast", "communities@1:llm:scripted/p1/200/600"}
    # a rerun asks again for the communities the model failed on, and for parents built from their fallbacks
    again = run("communities", store, embedder=embedder, llm=ScriptedReports(), method="llm", progress=False,
                max_cluster_size=6, llm_context_tokens=200)
    assert again.llm_calls == again.counters["reports_written"] >= len(failed)
    assert {r["method"] for r in store.query("MATCH (c:Community) RETURN c.method AS method")} == {"llm"}
    assert run("communities", store, embedder=embedder, llm=ScriptedReports(), method="llm", progress=False,
               max_cluster_size=6, llm_context_tokens=200).llm_calls == 0
    # the fast method replaces every llm report
    fast = run("communities", store, embedder=embedder, progress=False, max_cluster_size=6)
    assert fast.counters["reports_written"] == len(rows) and fast.llm_calls == 0


def test_llm_reports_with_the_local_model(kg_graph, embedder, llm_data_dir, model_dir):
    llm_settings = {"model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": llm_settings})
    llm = create_gateway(settings)
    report = run("communities", kg_graph, embedder=embedder, llm=llm, method="llm", progress=False,
                 max_cluster_size=10, llm_max_tokens=300)
    rows = kg_graph.query("MATCH (c:Community) RETURN c.method AS method, c.title AS title, c.summary AS summary")
    assert rows and report.llm_calls >= len(rows) and report.prompt_tokens > 100 * len(rows)
    # the 0.5B model's wording varies; a report it could not write is the fast one, and said so
    assert all(r["title"] and r["summary"] for r in rows)
    assert sum(r["method"] == "fast" for r in rows) == report.counters.get("llm_fallbacks", 0)
    assert llm.ledger.totals(stage="enrich:communities").calls == report.llm_calls
