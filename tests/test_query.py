"""Retrieval strategies on a small hand-built hyperlinked site, real embeddings, real FalkorDB graph."""

import pytest

from neoweave.errors import NeoweaveError
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.query import available, strategy

EVENT_LOOP_Q = "How does the event loop schedule coroutines and callbacks?"


@pytest.fixture
def graph(falkordb_store, embedder, site):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    return falkordb_store


def _anchor(section_id: str) -> str:
    return section_id.rsplit("#", 1)[-1]


def test_registry_and_parameter_errors(graph, embedder):
    assert {"naive", "larag"} <= set(available())
    with pytest.raises(NeoweaveError, match="unknown strategy 'nope'"):
        strategy("nope", graph, embedder)
    with pytest.raises(NeoweaveError, match=r"no parameter \['kk'\]"):
        strategy("larag", graph, embedder, kk=3)
    with pytest.raises(NeoweaveError, match="depth must be >= 0"):
        strategy("larag", graph, embedder).retrieve("x", depth=-1)


def test_naive_returns_top_k_with_trace_and_cost(graph, embedder):
    result = strategy("naive", graph, embedder, k=2).retrieve(EVENT_LOOP_Q)
    assert len(result.items) == 2 and result.parameters == {"profile": "neoweave", "k": 2}
    assert _anchor(result.items[0].section_id) == "event-loop"
    assert result.items[0].score >= result.items[1].score
    assert all(item.origin == "seed" for item in result.items)
    assert result.trace.statements == ["chunk_vector_search"]
    assert (result.items[0].section_id, "HAS_CHUNK", result.items[0].chunk_id) in result.trace.relationships
    assert set(result.cost.milliseconds) == {"embed", "graph"} and result.context_tokens > 0


def test_larag_zero_expansion_is_plain_top_k(graph, embedder):
    naive = strategy("naive", graph, embedder, k=3).retrieve(EVENT_LOOP_Q)
    larag = strategy("larag", graph, embedder, k=3, n_links=0, depth=0, top_m=0).retrieve(EVENT_LOOP_Q)
    assert [i.chunk_id for i in larag.items] == [i.chunk_id for i in naive.items]


def test_larag_follows_the_link_from_the_seed_section(graph, embedder):
    result = strategy("larag", graph, embedder, k=1).retrieve(EVENT_LOOP_Q)  # (1, 1, 1)
    seed, linked = result.items
    assert seed.origin == "seed" and _anchor(seed.section_id) == "event-loop"
    assert linked.origin == "link" and _anchor(linked.section_id) == "garbage-collection"
    assert linked.details["hop"] == 1 and linked.details["from_section"] == seed.section_id
    assert linked.details["link_text"] == "garbage collection"
    assert (seed.section_id, "LINKS_TO", linked.section_id) in result.trace.relationships
    assert result.trace.statements == ["chunk_vector_search", "links_missing_context_embedding", "larag_expand"]


def test_larag_follows_the_links_of_near_misses_without_returning_them(graph, embedder):
    # expand_k: the chunks ranked k+1..expand_k lend their sections' links; they are not returned themselves
    question = "Asynchronous programming guide overview"
    near_misses = strategy("naive", graph, embedder, k=4).retrieve(question).items[1:]
    one = strategy("larag", graph, embedder, k=1).retrieve(question)
    wider = strategy("larag", graph, embedder, k=1, expand_k=4).retrieve(question)
    assert [i.origin for i in wider.items].count("seed") == 1 and wider.items[0].chunk_id == one.items[0].chunk_id
    sources = {i.details["from_section"] for i in wider.items if i.origin == "link"}
    assert sources - {i.details["from_section"] for i in one.items if i.origin == "link"}, "no near miss lent a link"
    assert sources <= {wider.items[0].section_id} | {i.section_id for i in near_misses}
    assert not {i.chunk_id for i in near_misses} & {i.chunk_id for i in wider.items if i.origin == "seed"}
    assert len({i.chunk_id for i in wider.items}) == len(wider.items)
    plain = strategy("larag", graph, embedder, k=1, expand_k=4, n_links=0).retrieve(question)
    assert [i.chunk_id for i in plain.items] == [one.items[0].chunk_id]  # no expansion: the k seeds alone


def test_larag_orders_linked_chunks_by_the_path_when_asked(graph, embedder):
    # order_linked=path: a link's cosine to the question plus that of the chunk it leaves from; same chunks
    question = "Welcome to the tiny documentation set"
    by_link = strategy("larag", graph, embedder, k=1, expand_k=6).retrieve(question)
    by_path = strategy("larag", graph, embedder, k=1, expand_k=6, order_linked="path").retrieve(question)
    assert sorted(i.chunk_id for i in by_path.items) == sorted(i.chunk_id for i in by_link.items)
    seed_scores = {}
    for item in strategy("naive", graph, embedder, k=6).retrieve(question).items:
        seed_scores[item.section_id] = max(seed_scores.get(item.section_id, -1.0), item.score)
    linked = [i for i in by_path.items if i.origin == "link"]
    priorities = [seed_scores[i.details["from_section"]] + i.details["link_score"] for i in linked]
    assert len(linked) >= 2 and priorities == sorted(priorities, reverse=True)
    assert [i.chunk_id for i in by_path.items] != [i.chunk_id for i in by_link.items]  # here the orders differ
    with pytest.raises(NeoweaveError, match="order_linked must be link or path"):
        strategy("larag", graph, embedder, order_linked="seed").retrieve(question)


def test_visited_set_stops_the_loop_back(graph, embedder):
    # event-loop -> garbage-collection -> event-loop: the second hop finds only visited chunks
    one = strategy("larag", graph, embedder, k=1, depth=1).retrieve(EVENT_LOOP_Q)
    two = strategy("larag", graph, embedder, k=1, depth=2).retrieve(EVENT_LOOP_Q)
    assert [i.chunk_id for i in two.items] == [i.chunk_id for i in one.items]
    assert len({i.chunk_id for i in two.items}) == len(two.items)
    assert two.trace.statements.count("larag_expand") == 2  # the second hop ran, and added nothing


def test_n_links_limits_links_per_section(graph, embedder):
    question = "Welcome to the tiny documentation set"
    one = strategy("larag", graph, embedder, k=1, n_links=1).retrieve(question)
    two = strategy("larag", graph, embedder, k=1, n_links=2).retrieve(question)
    assert _anchor(one.items[0].section_id) == "tiny-docs"
    assert len([i for i in one.items if i.origin == "link"]) == 1
    linked = {_anchor(i.section_id) for i in two.items if i.origin == "link"}
    assert linked == {"async-guide", "garbage-collection"}


def test_top_m_keeps_the_best_chunks_of_a_target(falkordb_store, embedder, site):
    options = IngestOptions(sources=SourceOptions(), chunk_size=80, chunk_overlap=0, progress=False)
    Ingestor(falkordb_store, embedder, options).ingest(site)
    question = "The event loop runs coroutines and callbacks"
    seed_section = strategy("naive", falkordb_store, embedder, k=1).retrieve(question).items[0].section_id
    assert _anchor(seed_section) == "event-loop"
    one = strategy("larag", falkordb_store, embedder, k=1, top_m=1).retrieve(question)
    three = strategy("larag", falkordb_store, embedder, k=1, top_m=3).retrieve(question)
    linked_one = [i for i in one.items if i.origin == "link"]
    linked_three = [i for i in three.items if i.origin == "link"]
    assert len(linked_one) == 1 and len(linked_three) == 3
    assert {_anchor(i.section_id) for i in linked_three} == {"garbage-collection"}
    assert linked_three[0].chunk_id == linked_one[0].chunk_id  # the best chunk stays first
    assert linked_three[0].score >= linked_three[1].score >= linked_three[2].score


def test_unresolved_links_are_ignored(graph, embedder):
    result = strategy("larag", graph, embedder, k=1).retrieve("a page that does not exist and an anchor that does not")
    assert _anchor(result.items[0].section_id) == "missing-targets"
    assert [i.origin for i in result.items] == ["seed"]


def test_ingest_embeds_every_link_context_and_retrieval_only_reads_them(graph, embedder):
    cached = graph.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) WHERE l.context_embedding IS NOT NULL "
                         "RETURN count(l) AS n")[0]["n"]
    assert cached == 4
    result = strategy("larag", graph, embedder, k=1).retrieve(EVENT_LOOP_Q)
    assert "set_link_context_embeddings" not in result.trace.statements


def test_link_contexts_missing_from_an_older_graph_can_all_be_embedded(graph, embedder):
    from neoweave.ingest.link_contexts import embed_all_link_contexts

    graph.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) SET l.context_embedding = NULL", write=True)
    links = graph.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) RETURN count(l) AS n")[0]["n"]
    assert embed_all_link_contexts(graph, embedder, batch_size=3, progress=False) == links == 4  # 2 batches
    assert embed_all_link_contexts(graph, embedder, progress=False) == 0
    cached = graph.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) WHERE l.context_embedding IS NOT NULL "
                         "RETURN count(l) AS n")[0]["n"]
    assert cached == links
    result = strategy("larag", graph, embedder, k=1).retrieve(EVENT_LOOP_Q)
    assert result.trace.statements == ["chunk_vector_search", "links_missing_context_embedding", "larag_expand"]
    assert any(item.origin == "link" for item in result.items)


def test_top_k_returns_k_chunks_on_a_larger_graph(falkordb_store, embedder, tmp_path):
    # FalkorDB's HNSW query may return fewer than k nodes; the statements over-fetch and cut to k
    from conftest import stdlib_corpus

    corpus = tmp_path / "stdlib.jsonl"
    corpus.write_text(stdlib_corpus(300))
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(corpus)
    for k in (1, 3, 5, 10):
        items = strategy("naive", falkordb_store, embedder, k=k).retrieve("parse command line arguments").items
        assert len(items) == k, f"k={k}: got {len(items)}"
        assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)
    hits = falkordb_store.vector_search("chunk_embedding", embedder.embed_query("parse command line arguments"), 4)
    assert len(hits) == 4


def test_larag_as_published_expands_from_the_seed_chunks_own_links(falkordb_store, embedder, site):
    options = IngestOptions(sources=SourceOptions(), chunk_size=80, chunk_overlap=0, progress=False)
    Ingestor(falkordb_store, embedder, options).ingest(site)
    starts = falkordb_store.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) RETURN l.text AS text, l.start AS start")
    assert starts and all(isinstance(row["start"], int) for row in starts)  # the link's offset in its section
    first = "The event loop runs coroutines and callbacks"  # the section's first chunk: no link in it
    seed = strategy("naive", falkordb_store, embedder, k=1).retrieve(first).items[0]
    assert _anchor(seed.section_id) == "event-loop" and "garbage collection" not in seed.text
    section_wide = strategy("larag", falkordb_store, embedder, k=1).retrieve(first)
    assert [_anchor(i.section_id) for i in section_wide.items] == ["event-loop", "garbage-collection"]
    paper = strategy("larag", falkordb_store, embedder, k=1, profile="paper")
    assert (paper.expand_from, paper.rank_links, paper.links) == ("chunk", "order", "authored")
    alone = paper.retrieve(first)
    assert [i.origin for i in alone.items] == ["seed"]  # the link is in another chunk of the section
    assert "larag_expand_chunks" in alone.trace.statements
    holder = "remember that garbage collection still reclaims finished tasks"
    linked = paper.retrieve(holder)
    assert "garbage collection" in linked.items[0].text
    assert [i.origin for i in linked.items] == ["seed", "link"] and \
        _anchor(linked.items[1].section_id) == "garbage-collection"
    assert linked.items[1].details["from_chunk"] == linked.items[0].chunk_id
    # a graph stored before links had offsets: the chunk whose text holds the link text has the link
    falkordb_store.query("MATCH (:Section)-[l:LINKS_TO]->(:Section) SET l.start = NULL", write=True)
    assert [i.chunk_id for i in paper.retrieve(holder).items] == [i.chunk_id for i in linked.items]
    assert [i.origin for i in paper.retrieve(first).items] == ["seed"]


def test_profiles_set_the_papers_values_and_given_parameters_win(graph, embedder):
    naive = strategy("naive", graph, embedder, profile="paper")
    assert naive.k == 10 and strategy("naive", graph, embedder, profile="paper", k=3).k == 3  # given beats profile
    assert naive.with_overrides(profile="neoweave").k == 5  # back to the defaults
    with pytest.raises(NeoweaveError, match="profile must be one of neoweave, paper"):
        strategy("naive", graph, embedder, profile="published")
    with pytest.raises(NeoweaveError, match="'ppr' is neoweave's own"):
        strategy("ppr", graph, embedder, profile="paper")
    with pytest.raises(NeoweaveError, match="expand_from=chunk by their order"):
        strategy("larag", graph, embedder, expand_from="chunk").retrieve(EVENT_LOOP_Q)
