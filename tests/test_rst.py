"""KHL-RAG's paragraph graph on a hand-written passage set, the real store and embedding model: candidate pairs
(never all pairs), the discourse-marker relations, the confidence threshold, incremental runs and deletion,
and the khl retriever's tau filter and mixing ratios."""

from __future__ import annotations

import json

import pytest

from neoweave.enrich import run
from neoweave.enrich.rst_relations import PARAGRAPH_TYPES, fast_paragraph_type, fast_relation, opening_marker
from neoweave.errors import NeoweaveError
from neoweave.ingest import GraphWriter, IngestOptions, Ingestor, SourceOptions
from neoweave.llm.gateway import StructuredResult
from neoweave.llm.ledger import LLMCall
from neoweave.query import get_prompt, render, strategy
from neoweave.query.khl_analysis import question_type

COFFEE = [
    "Coffee plants grow best in the tropics. The coffee belt lies between the Tropic of Cancer and the Tropic of "
    "Capricorn, where frost never comes.",
    "For example, Ethiopia grows arabica coffee in its southwestern highlands, where the coffee plant first grew "
    "wild in the forests.",
    "However, rising temperatures threaten many coffee farms in the tropics. Growers lose coffee yields as the "
    "climate warms each year.",
    "As a result, coffee farmers move their plots to higher and cooler land, climbing the mountains every decade.",
    "In summary, coffee depends on a narrow climate band in the tropics, and that band is now shifting uphill.",
]
RAIL = [
    "The first public railway in Britain opened in 1825 between Stockton and Darlington. Steam engines pulled "
    "coal wagons along it.",
    "Then passenger lines spread quickly across Britain during the railway mania of the 1840s, linking towns.",
]
ESPRESSO = ("Espresso is brewed by forcing hot water through finely ground coffee beans. Arabica coffee from "
            "Ethiopian highlands makes a fruity espresso.")
TEA = ("Tea bushes grow on cool, misty hillsides in Darjeeling and Assam. Tea pickers take only the top two leaves "
       "and a bud.")


def _ingest(store, embedder, path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    options = IngestOptions(sources=SourceOptions(), chunk_size=200, chunk_overlap=0, progress=False)
    Ingestor(store, embedder, options).ingest(path)


def _records(*docs):
    return [{"id": doc_id, "title": title, "text": "\n\n".join(paragraphs)} for doc_id, title, paragraphs in docs]


@pytest.fixture
def passages(falkordb_store, embedder, tmp_path):
    _ingest(falkordb_store, embedder, tmp_path / "p.jsonl",
            _records(("coffee", "Coffee", COFFEE), ("rail", "Railways", RAIL), ("espresso", "Espresso", [ESPRESSO])))
    orders = falkordb_store.query("MATCH (c:Chunk) RETURN c.doc_id AS doc, count(c) AS n ORDER BY doc")
    assert {r["doc"]: r["n"] for r in orders} == {"coffee": 5, "espresso": 1, "rail": 2}  # one chunk a paragraph
    return falkordb_store


def _edges(store):
    rows = store.query("MATCH (a:Chunk)-[r:RST]->(b:Chunk) RETURN a.doc_id AS doc, a.order AS a, b.order AS b, "
                       "b.doc_id AS other, r.relation AS relation, r.weight AS weight, r.method AS method, "
                       "r.source AS source")
    return rows


def test_rules_read_discourse_markers_adjacency_and_types():
    assert opening_marker("However, it rained.")[1].relation == "Concession"
    assert opening_marker("For instance the cat.")[1].relation == "Example"
    assert opening_marker("Butter is made from cream.") is None  # 'but' only as a word
    assert fast_relation("Therefore we left.", 1, 0.5).relation == "Result"
    assert fast_relation("Therefore we left.", 2, 0.5).relation == "Topic"  # a marker speaks of the previous one
    summary = fast_relation("In conclusion, it works.", 2, 0.5)
    assert summary.relation == "Conclusion"
    assert summary.weight < fast_relation("In conclusion, it works.", 1, 0.5).weight
    assert fast_relation("The cat sat.", 1, 0.62).relation == "Elaboration"
    assert fast_relation("The cat sat.", None, 0.7).relation == "Topic"
    assert fast_relation("The cat sat.", 1, 0.62).weight == 6.2
    kind, reason = fast_paragraph_type("He was born in 1901 and moved to Paris, where he later died. He returned "
                                       "home after the war and founded a school.")
    assert kind == "narrative" and "born" in reason
    assert fast_paragraph_type("You should vote because it matters; therefore we must act, and evidence shows "
                               "it is important.")[0] == "argumentative"
    assert all(fast_paragraph_type(text)[0] in PARAGRAPH_TYPES for text in [*COFFEE, *RAIL, ESPRESSO, ""])
    assert question_type("Are Christopher Nolan and Sathish Kalathil both film directors?")[0] == "reasoning"
    assert question_type("According to the passage, what threatens coffee?")[0] == "reading"
    assert question_type("Who directed Inception?")[0] == "knowledge"


def test_every_pair_as_the_paper_asks_for_a_small_corpus(passages, embedder):
    # KHL-RAG asks about every pair of paragraphs (003 l. 91-93): unbounded window and similar, across documents
    report = run("rst", passages, embedder=embedder, progress=False, window=1_000_000, similar=1_000_000,
                 cross_document=True)
    assert report.counters["pairs_asked"] == report.counters["pairs_all_in_corpus"] == 28


def test_fast_step_pairs_candidates_only_and_writes_marker_relations(passages, embedder):
    report = run("rst", passages, embedder=embedder, progress=False, window=2, similar=1)
    assert report.chunks == 8
    # all pairs: 8 paragraphs -> 28 in the corpus, 10 + 1 within documents; asked: window-2 neighbours (coffee
    # 4 + 3 = 7 pairs, rail 1) plus similar pairs already among them
    assert report.counters["pairs_all_in_corpus"] == 28
    assert report.counters["pairs_all_in_documents"] == 11
    assert report.counters["pairs_asked"] == 8
    edges = _edges(passages)
    coffee = {(e["a"], e["b"], e["relation"]) for e in edges if e["doc"] == "coffee"}
    assert {(0, 1, "Example"), (1, 2, "Concession"), (2, 3, "Result"), (3, 4, "Summary"), (2, 4, "Summary")} \
        <= coffee
    assert {(e["a"], e["b"], e["relation"]) for e in edges if e["doc"] == "rail"} == {(0, 1, "Sequence")}
    assert all(e["doc"] == e["other"] for e in edges)  # no cross-document pairs unless asked for
    assert all(3.0 < e["weight"] <= 10 and e["method"] == "fast" and e["source"] == "rst@1:fast" for e in edges)
    features = passages.query("MATCH (c:Chunk) RETURN c.text AS text, c.main_idea AS idea, c.keywords AS keywords, "
                              "c.paragraph_type AS type, c.rst_method AS method")
    for row in features:
        assert row["idea"] and row["idea"] in row["text"] and row["method"] == "fast"
        assert row["keywords"] and row["type"] in PARAGRAPH_TYPES
    hits = passages.run("chunk_keywords_search", {"k": 1, "embedding": embedder.embed_query("railway mania")})
    assert hits and hits[0]["chunk_id"].startswith("rail")
    hits = passages.run("chunk_main_idea_search", {"k": 1, "embedding": embedder.embed_query(
        "farmers move coffee plots uphill")})
    assert hits and hits[0]["chunk_id"] == passages.query("MATCH (c:Chunk {doc_id: 'coffee', order: 3}) "
                                                          "RETURN c.id AS id")[0]["id"]
    assert run("rst", passages, embedder=embedder, progress=False, window=2, similar=1).chunks == 0  # resumable


def test_window_similarity_and_threshold_prune_the_pairs(passages, embedder):
    narrow = run("rst", passages, embedder=embedder, progress=False, window=1, similar=0)
    assert narrow.counters["pairs_asked"] == 5  # adjacent pairs only: coffee 4, rail 1
    assert {(e["a"], e["b"]) for e in _edges(passages) if e["doc"] == "coffee"} <= {(0, 1), (1, 2), (2, 3), (3, 4)}
    strict = run("rst", passages, embedder=embedder, progress=False, window=1, similar=0, min_weight=7.5)
    strict_edges = _edges(passages)
    assert strict.counters["pairs_asked"] == 5 and strict_edges
    assert all(e["weight"] > 7.5 for e in strict_edges) and len(strict_edges) < narrow.counters["edges"]
    across = run("rst", passages, embedder=embedder, progress=False, window=1, similar=1, cross_document=True)
    pairs = {(e["doc"], e["other"]) for e in _edges(passages)}
    assert ("coffee", "espresso") in pairs  # the espresso paragraph's most similar one is a coffee paragraph
    assert across.counters["pairs_similar"] >= 1
    with pytest.raises(NeoweaveError, match="min_weight"):
        run("rst", passages, embedder=embedder, progress=False, min_weight=10)


def test_new_documents_pair_with_existing_paragraphs_and_deletion_removes_edges(passages, embedder, tmp_path):
    run("rst", passages, embedder=embedder, progress=False, similar=1, cross_document=True)
    before = _edges(passages)
    _ingest(passages, embedder, tmp_path / "tea.jsonl", _records(("tea", "Tea", [TEA])))
    added = run("rst", passages, embedder=embedder, progress=False, similar=1, cross_document=True)
    assert added.chunks == 1 and added.counters["pairs_asked"] == 1  # only the new paragraph's pair is asked
    assert added.counters["pairs_all_in_corpus"] == 8
    after = _edges(passages)
    assert [e for e in after if "tea" not in (e["doc"], e["other"])] == before  # old edges untouched
    GraphWriter(passages).delete_documents(["espresso"])
    assert not [e for e in _edges(passages) if "espresso" in (e["doc"], e["other"])]


class ScriptedRelations:
    """Features and relations from a script (orchestration only: the prompts are run with the real local model in
    test_rst_llm_with_the_local_model and benchmarks/khl.py)."""

    model = "scripted"
    concurrency = 1

    def __init__(self) -> None:
        self.requests: list[str] = []

    def structured(self, messages, schema, **kwargs):
        text = messages[-1]["content"]
        self.requests.append(kwargs.get("stage", ""))
        if text.startswith("Paragraph:"):
            answer = {"main_idea": text.split("\n", 1)[1].split(". ")[0], "keywords": ["coffee", "coffee", " "],
                      "type": "Descriptive", "reason": "scripted"}
        elif text.startswith("Question:"):
            answer = {"keywords": ["coffee farms"], "main_idea": "what threatens coffee", "type": "reasoning"}
        else:  # pair 1: two relations (one unknown, dropped); pair 2: None; pair 3 left out -> fast rules
            answer = [{"pair": 1, "relations": [{"relation": "Evidence", "confidence": 8, "reason": "supports"},
                                                {"relation": "Gossip", "confidence": 9}]},
                      {"pair": 2, "relations": [{"relation": "None", "confidence": 9},
                                                {"relation": "Cause", "confidence": 9}]}]
        call = LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=50, completion_tokens=20)
        return StructuredResult(schema.model_validate(answer), json.dumps(answer), [call])


def test_llm_method_batches_pairs_and_falls_back_per_pair(passages, embedder):
    llm = ScriptedRelations()
    report = run("rst", passages, embedder=embedder, llm=llm, method="llm", progress=False, window=1, similar=0,
                 pairs_per_call=3)
    assert report.counters["pairs_asked"] == 5 and llm.requests.count("rst:relations") == 2  # 3 + 2 pairs
    assert llm.requests.count("rst:features") == 8 and report.llm_calls == 10
    edges = _edges(passages)
    llm_edges = [e for e in edges if e["method"] == "llm"]
    assert llm_edges and {e["relation"] for e in llm_edges} == {"Evidence"}
    assert any(e["method"] == "fast" for e in edges)  # the pairs the model left out
    assert report.counters["llm_pair_fallbacks"] == 1  # pair 3 of the first call
    row = passages.query("MATCH (c:Chunk {doc_id: 'rail', order: 0}) RETURN c.keywords AS k, c.paragraph_type AS t")
    assert row[0]["k"] == ["coffee"] and row[0]["t"] == "descriptive"


def test_khl_on_a_graph_without_paragraph_features_says_to_run_the_rst_step(passages, embedder):
    with pytest.raises(NeoweaveError, match="no chunk has paragraph features") as raised:
        strategy("khl", passages, embedder, analysis="fast", k=2).retrieve("What threatens coffee farms?")
    assert "enrich rst" in raised.value.hint
    dense = strategy("khl", passages, embedder, analysis="fast", mode="hlpg", k=2).retrieve("coffee farms")
    assert len(dense.items) == 2  # dense seeds need no features
    run("rst", passages, embedder=embedder, progress=False, window=2, similar=1)
    with pytest.raises(NeoweaveError, match="khl: the graph has no entities") as raised:  # the KG half needs them
        strategy("khl", passages, embedder, analysis="fast", k=2).retrieve("What threatens coffee farms?")
    assert "enrich kg" in raised.value.hint
    paragraphs_only = strategy("khl", passages, embedder, analysis="fast", mode="hlpg_filter", k=2)
    assert paragraphs_only.retrieve("What threatens coffee farms?").items


@pytest.fixture
def khl_graph(passages, embedder):
    run("rst", passages, embedder=embedder, progress=False, window=2, similar=1)
    run("kg", passages, embedder=embedder, progress=False)
    return passages


def test_khl_adds_rst_neighbours_above_tau_only(khl_graph, embedder):
    question = "Why do coffee farmers move their plots to higher land?"
    open_ = strategy("khl", khl_graph, embedder, mode="hlpg_filter", analysis="fast", top_k=1, k=1, tau=0.0,
                     neighbours_per_seed=5)
    result = open_.retrieve(question)
    neighbours = [i for i in result.items if i.origin == "rst"]
    assert neighbours and all(i.details["weight"] > 0 for i in neighbours)
    assert any(rel[1] == "RST" for rel in result.trace.relationships)
    weights = sorted(i.details["weight"] for i in neighbours)
    tau = weights[0]  # the weakest neighbour's edge is not above tau = its own weight
    closed = open_.retrieve(question, tau=tau)
    assert all(i.details["weight"] > tau for i in closed.items if i.origin == "rst")
    assert len([i for i in closed.items if i.origin == "rst"]) < len(neighbours)
    assert not [i for i in open_.retrieve(question, tau=10.0).items if i.origin == "rst"]
    assert len(open_.retrieve(question, neighbours_per_seed=1).items) == 2  # the seed and its strongest neighbour
    assert result.parameters["rst_neighbours"] == len(neighbours)
    # the paper adds every neighbour above tau, however many: as many as an uncapped count brings
    every = open_.retrieve(question, neighbours_per_seed=1, all_neighbours=True)
    assert len(neighbours) > 1 and [i.chunk_id for i in every.items] == [i.chunk_id for i in result.items]


def test_khl_mixes_kg_and_paragraph_passages_by_question_type(khl_graph, embedder):
    khl = strategy("khl", khl_graph, embedder, analysis="fast", k=4, top_k=3, tau=0.0, neighbours_per_seed=0)
    assert [khl.kg_count(t) for t in ("knowledge", "reading", "reasoning")] == [3, 2, 1]
    assert [strategy("khl", khl_graph, embedder, k=10, analysis="fast").kg_count(t)
            for t in ("knowledge", "reading", "reasoning")] == [7, 5, 3]
    question = "Where does Ethiopia grow arabica coffee?"
    for kind, expected in (("knowledge", {"kg": 3, "paragraph_graph": 1}),
                           ("reasoning", {"kg": 1, "paragraph_graph": 3})):
        result = khl.retrieve(question, question_type=kind)
        assert result.parameters["mix"] == expected and len(result.items) == 4
        assert len({i.chunk_id for i in result.items}) == 4
        assert [i.details["group"].split()[0] for i in result.items] == \
            ["Knowledge-graph"] * expected["kg"] + ["Paragraph-graph"] * expected["paragraph_graph"]
    assert khl.retrieve(question).parameters["question_type"] == "knowledge"
    only_kg = khl.retrieve(question, mode="kg")
    assert only_kg.parameters["mix"]["paragraph_graph"] == 0 and all(i.origin == "kg" for i in only_kg.items)
    assert any("ethiopia" in entity for entity in only_kg.items[0].details["entities"])  # the named entity first
    assert "kg_link_entities" in only_kg.trace.statements
    by_vector = khl.retrieve(question, mode="kg", kg_entities="vector")
    assert by_vector.items and "kg_entity_vector_search" in by_vector.trace.statements
    plain = khl.retrieve(question, mode="hlpg")
    assert "chunk_vector_search" in plain.trace.statements and "chunk_keywords_search" not in plain.trace.statements
    prompt = render(get_prompt("short_answer"), khl.retrieve(question))[1]["content"]
    assert "Knowledge-graph passages" in prompt and "Paragraph-graph passages" in prompt
    with pytest.raises(NeoweaveError, match="mode"):
        khl.retrieve(question, mode="everything")


def test_khl_llm_analysis_sets_the_type_and_is_counted(khl_graph, embedder):
    llm = ScriptedRelations()
    result = strategy("khl", khl_graph, embedder, llm, k=4).retrieve("What threatens coffee farms?")
    assert result.parameters["question_type"] == "reasoning" and result.parameters["keywords"] == ["coffee farms"]
    assert result.cost.llm_calls == 1 and result.cost.prompt_tokens == 50
    assert result.parameters["mix"]["paragraph_graph"] == 3
    with pytest.raises(NeoweaveError, match="analysis=fast"):
        strategy("khl", khl_graph, embedder).retrieve("x")


def test_rst_llm_with_the_local_model(falkordb_store, embedder, tmp_path, llm_data_dir, model_dir):
    from neoweave.config import load_settings
    from neoweave.llm import create_gateway

    _ingest(falkordb_store, embedder, tmp_path / "c.jsonl", _records(("coffee", "Coffee", COFFEE[2:4])))
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": {
        "model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}})
    llm = create_gateway(settings)
    report = run("rst", falkordb_store, embedder=embedder, llm=llm, method="llm", progress=False)
    assert report.chunks == 2 and report.counters["pairs_asked"] == 1
    assert report.llm_calls >= 3 and report.prompt_tokens > 200  # two feature calls, one relations call
    assert "qwen2.5-coder-0.5b" in report.signature
    rows = falkordb_store.query("MATCH (c:Chunk) RETURN c.main_idea AS idea, c.rst_method AS method, "
                                "c.paragraph_type AS type, c.main_idea_embedding IS NOT NULL AS embedded")
    # the 0.5B model's answers vary; each paragraph has features either from it or from the fast fallback
    assert all(r["idea"] and r["type"] in PARAGRAPH_TYPES and r["embedded"] for r in rows)
    assert {r["method"] for r in rows} <= {"llm", "fast"}
    assert report.counters.get("llm_feature_fallbacks", 0) == sum(r["method"] == "fast" for r in rows)
    assert llm.ledger.totals(stage="rst:relations").calls >= 1
    again = run("rst", falkordb_store, embedder=embedder, llm=llm, method="llm", progress=False)
    assert again.chunks == report.counters.get("llm_feature_fallbacks", 0)  # only fallbacks are retried
