"""The knowledge-base object: the verbs every front end goes through, its limits, read-only mode, and an
import that loads nothing heavy (real store and embedding model; the LLM a scripted double)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ScriptedClient

import neoweave
from neoweave.errors import NeoweaveError, ReadOnlyViolation
from neoweave.kb import KnowledgeBase, Limits
from neoweave.llm.gateway import ChatResult
from neoweave.llm.ledger import LLMCall
from neoweave.protocols import LLMClient, TextEmbedder

QUESTION = "How does the event loop schedule coroutines and callbacks?"
BASE = "https://docs.example.org/tiny/"


class ScriptedAnswers(ScriptedClient):
    """An LLMClient double: answers every chat with the first words of its prompt's first passage."""

    def chat(self, messages, **kwargs):
        return ChatResult("the event loop", LLMCall(stage=kwargs.get("stage", ""), model=self.model,
                                                    prompt_tokens=len(messages[-1]["content"]) // 4))


def test_importing_neoweave_loads_no_store_model_or_framework():
    code = ("import sys, neoweave; kb = neoweave.open('unused-dir'); "
            "print([m for m in ('torch', 'sentence_transformers', 'onnxruntime', 'neoweave.store', "
            "'neoweave.query', 'falkordb', 'fastapi') if m in sys.modules])")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(loaded.replace("'", '"')) == []


def test_the_verbs_end_to_end(kb, site, tmp_path):
    assert isinstance(kb.embedder, TextEmbedder)
    report = kb.ingest(site, base_url=BASE)
    assert report.documents_new == 3 and report.link_contexts_embedded == 4
    assert kb.status()["nodes"]["Document"] == 3
    result = kb.retrieve(QUESTION, "larag", k=1)
    assert result.items[0].section_id == BASE + "guide/async.html#event-loop"
    assert {item.origin for item in result.items} == {"seed", "link"}
    assert kb.retrieve(QUESTION, "larag", k="1", n_links="1").parameters == result.parameters  # text typed
    # the form `neoweave eval -P` takes and error hints print (`-P khl.mode=hlpg`) is the strategy's own here too
    seeds_only = kb.retrieve(QUESTION, "larag", k=1, parameters={"larag.depth": 0})
    assert seeds_only.parameters["depth"] == 0 and {item.origin for item in seeds_only.items} == {"seed"}
    assert kb.strategy("larag", **{"larag.top_m": 2}).top_m == 2
    explanation = kb.explain(QUESTION, "larag", k=1)
    page = explanation.to_html(tmp_path / "why.html")
    assert (tmp_path / "why.html").read_text(encoding="utf-8") == page and "neo4j-viz" in page
    assert json.loads(explanation.to_json())["strategy"] == "larag"
    assert explanation.browser_cypher().startswith(":params {edges: [")
    rows = kb.cypher("MATCH (d:Document) RETURN count(d) AS documents")
    assert rows == [{"documents": 3}]
    with pytest.raises(ReadOnlyViolation):
        kb.cypher("MATCH (d:Document) DETACH DELETE d")
    assert [s["name"] for s in kb.strategies()][:3] == ["community_global", "community_local", "hybrid"]
    ppr = next(s for s in kb.strategies() if s["name"] == "ppr")
    assert ppr["requires"] == ["kg"] and any(p["name"] == "hops" and p["doc"] for p in ppr["parameters"])
    assert kb.delete(str(site / "guide" / "memory.html"))
    assert kb.status()["nodes"]["Document"] == 2


def test_answer_goes_through_the_given_llm_client(kb, site):
    llm = ScriptedAnswers()
    assert isinstance(llm, LLMClient)  # what a user implements to plug in their own model
    scripted = KnowledgeBase(kb.settings, store=kb.store, embedder=kb.embedder, llm=llm)
    scripted.ingest(site, base_url=BASE)
    answered = scripted.answer(QUESTION, "naive", k=2, prompt="basic")
    assert answered.answer == "the event loop" and answered.retrieval.cost.llm_calls == 1
    with pytest.raises(NeoweaveError, match="unknown prompt"):
        scripted.answer(QUESTION, "naive", prompt="no-such-prompt")


@pytest.mark.parametrize(("call", "message"), [
    (lambda kb: kb.retrieve("x" * 2001), "at most 2000"),
    (lambda kb: kb.retrieve("  \x00 "), "the question is empty"),
    (lambda kb: kb.retrieve(QUESTION, k=1_000_000_000), "k must be between 1 and 50"),
    (lambda kb: kb.retrieve(QUESTION, k=0), "k must be between 1 and 50"),
    (lambda kb: kb.retrieve(QUESTION, "larag", depth=10**6), "at most 1000"),
    (lambda kb: kb.retrieve(QUESTION, "larag", no_such=1), "has no parameter 'no_such'"),
    (lambda kb: kb.retrieve(QUESTION, "larag", depth="deep"), "takes a int"),
    (lambda kb: kb.retrieve(QUESTION, "no-such-strategy"), "unknown strategy"),
    (lambda kb: kb.retrieve(QUESTION, "larag", parameters={"larag.depth": 10**6}), "at most 1000"),  # read as depth
    (lambda kb: kb.retrieve(QUESTION, "larag", parameters={"ppr.damping": 0.5}), "belongs to strategy 'ppr'"),
    (lambda kb: kb.retrieve(QUESTION, "larag", parameters={"depth": 1, "larag.depth": 2}), "given twice"),
    (lambda kb: kb.retrieve(QUESTION, "larag", parameters={"nosuch.depth": 1}), "no parameter 'nosuch.depth'"),
])
def test_limits_and_parameters_are_checked_before_anything_runs(kb, call, message):
    before = dict(kb.store.statement_counts)
    with pytest.raises(NeoweaveError, match=message):
        call(kb)
    assert dict(kb.store.statement_counts) == before  # refused before touching the graph


def test_limits_can_be_raised_and_read_only_refuses_writes(kb, site):
    kb.ingest(site, base_url=BASE)
    wide = KnowledgeBase(kb.settings, store=kb.store, embedder=kb.embedder, limits=Limits.unbounded())
    assert len(wide.retrieve(QUESTION, k=500).items) == kb.status()["nodes"]["Chunk"] == 6  # every chunk
    reader = KnowledgeBase(kb.settings, store=kb.store, embedder=kb.embedder, read_only=True)
    assert reader.retrieve(QUESTION, k=1).items
    for write in (lambda: reader.ingest(site), lambda: reader.delete("x"), lambda: reader.enrich("kg"),
                  lambda: reader.cypher("CREATE (:Tag {name: 'x'})", write=True)):
        with pytest.raises(ReadOnlyViolation):
            write()
    kb.store.read_only = False


def test_open_takes_a_path_and_settings_sections(workdir):
    kb = neoweave.open(workdir / "kb-data", llm={"model": "qwen2.5-coder-0.5b"}, falkordb={"graph": "other"})
    assert kb.settings.falkordb.data_dir == workdir / "kb-data" and kb.settings.falkordb.graph == "other"
    assert kb.settings.llm.model == "qwen2.5-coder-0.5b" and "kb-data" in repr(kb)
    with pytest.raises(NeoweaveError, match=r"invalid value for 'llm\.temperature'"):
        neoweave.open(workdir, llm={"temperature": 9})
    with pytest.raises(NeoweaveError, match="the graph is empty"):
        neoweave.open(workdir / "empty").retrieve(QUESTION)
