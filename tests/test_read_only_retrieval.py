"""Retrieval only reads: every registered strategy runs on a fully enriched graph whose store refuses every
write (the flag `neoweave serve` and `neoweave query` run with), and the graph is unchanged afterwards. The LLM
steps of the strategies that need one are scripted doubles (orchestration only)."""

from __future__ import annotations

import pytest
from conftest import ingest_records
from test_community_global import ScriptedAnalyst
from test_iterative import OPERA, PANK_PLAN, QUESTION, ScriptedPlanner, ScriptedSubQuestions

from neoweave.enrich import run
from neoweave.errors import ReadOnlyViolation
from neoweave.query import strategy
from neoweave.registry import STRATEGIES

# every strategy with parameters that need no LLM, or with its scripted LLM
CASES = {
    "naive": ({}, None),
    "larag": ({}, None),
    "kg": ({}, None),
    "ppr": ({}, None),
    "hybrid": ({}, None),
    "community_local": ({}, None),
    "community_global": ({}, lambda: ScriptedAnalyst({"Brandt": 80})),
    "orion": ({"expand": False, "prune": False}, None),
    "khl": ({"analysis": "fast"}, None),
    "recursive": ({}, ScriptedSubQuestions),
    "pank": ({}, lambda: ScriptedPlanner(PANK_PLAN)),
    "router": ({}, None),
}


def _snapshot(store):
    counts = store.counts()
    return counts.nodes, counts.relationships, store.read_meta(), sorted(str(i) for i in store.indexes())


def test_every_strategy_retrieves_with_the_write_path_disabled(falkordb_store, embedder, tmp_path):
    assert set(CASES) == set(STRATEGIES.names()), "a new strategy must be added to CASES"
    ingest_records(falkordb_store, embedder, tmp_path / "opera.jsonl", OPERA)
    for step in ("kg", "communities", "tags", "rst"):
        run(step, falkordb_store, embedder=embedder, progress=False)
    before = _snapshot(falkordb_store)
    falkordb_store.read_only = True
    with pytest.raises(ReadOnlyViolation):  # the write path is really closed
        falkordb_store.run("upsert_tags", {"rows": [{"name": "x"}]}, write=True)
    with pytest.raises(ReadOnlyViolation), falkordb_store.unit():
        pass
    for name, (parameters, make_llm) in CASES.items():
        llm = make_llm() if make_llm else None
        result = strategy(name, falkordb_store, embedder, llm, k=3, **parameters).retrieve(QUESTION)
        assert result.items or result.points or result.reports or result.answer, name
        assert result.trace.statements, name
    falkordb_store.read_only = False
    assert _snapshot(falkordb_store) == before


def test_links_without_a_context_embedding_are_skipped_and_noted_naming_the_repair(kb, site):
    report = kb.ingest(site, base_url="https://docs.example.org/tiny/")
    assert report.link_contexts_embedded == report.links_resolved == 4  # ingest embeds them: queries only read
    question = "How does the event loop schedule coroutines and callbacks?"
    linked = kb.retrieve(question, "larag", k=1)
    assert [item.origin for item in linked.items if item.origin == "link"] and not linked.trace.notes
    kb.cypher("MATCH ()-[l:LINKS_TO]->() SET l.context_embedding = NULL", write=True)  # a graph from before
    skipped = kb.retrieve(question, "larag", k=1)
    assert [item.origin for item in skipped.items] == ["seed"]  # no link can be ranked: none is followed
    assert skipped.trace.skipped_links and "neoweave ingest PATH" in skipped.trace.notes[0]
    assert skipped.trace.notes[0].startswith(f"larag: skipped {len(skipped.trace.skipped_links)} link(s) without "
                                             "a context embedding")
    assert kb.embed_link_contexts() == 4
    again = kb.retrieve(question, "larag", k=1)
    assert [item.chunk_id for item in again.items] == [item.chunk_id for item in linked.items]
    assert not again.trace.notes
