"""The saved Browser queries (`cypher/explore/`) on the real store: each runs with its parameters on a graph that
has documents, links, entities, communities and RST edges, and finds what it is for."""

from __future__ import annotations

import pytest
from conftest import COMMUNITY_CORPUS, ingest_records

from neoweave.cypher.registry import explore_names, explore_query
from neoweave.enrich import run
from neoweave.errors import StatementError
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions


@pytest.fixture
def full_graph(falkordb_store, embedder, site, tmp_path):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    ingest_records(falkordb_store, embedder, tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    run("kg", falkordb_store, embedder=embedder, progress=False, n_process=1)
    run("communities", falkordb_store, embedder=embedder, progress=False, max_cluster_size=6)
    run("rst", falkordb_store, embedder=embedder, progress=False, window=2, similar=1, min_weight=0.5)
    return falkordb_store


def _first(store, cypher: str) -> str:
    return store.query(cypher)[0]["v"]


def test_every_saved_query_runs_and_finds_what_it_is_for(full_graph):
    store = full_graph
    assert set(explore_names()) == {"broken_links", "community_members", "document_outline", "entity_neighbourhood",
                                    "graph_schema", "integrity_checks", "rst_chain"}
    page = _first(store, "MATCH (d:Document)-[:HAS_SECTION]->(:Section)-[:LINKS_TO]->() RETURN d.id AS v LIMIT 1")
    community = _first(store, "MATCH (m:Community)<-[:IN_COMMUNITY]-() RETURN m.id AS v LIMIT 1")
    paragraph = _first(store, "MATCH (c:Chunk)-[:RST]-() RETURN c.id AS v LIMIT 1")
    params = {"document_outline": {"doc_id": page}, "entity_neighbourhood": {"name": "Guido van Rossum"},
              "community_members": {"community_id": community}, "rst_chain": {"chunk_id": paragraph, "min_weight": 0.0}}
    rows = {}
    for name in explore_names():
        saved = explore_query(name)
        saved.check_params(params.get(name, {}))
        rows[name] = store.query(saved.text, params.get(name, {}))
    assert any(row["links_to"] for row in rows["document_outline"])
    relations = {row["relation"] for row in rows["entity_neighbourhood"]}
    assert "MENTIONS" in relations and len(relations) > 1  # relations to other entities and the mentions
    assert rows["community_members"] and {row["community"] for row in rows["community_members"]} != {None}
    assert rows["rst_chain"] and all(row["relations"] for row in rows["rst_chain"])
    checks = {row["check"]: row["failing"] for row in rows["integrity_checks"]}
    assert checks == {"chunk without section": 0, "section without document": 0, "entity without mention": 0,
                      "relation citing a deleted chunk": 0, "relation evidence out of step": 0,
                      "mention forms out of step": 0, "entity counts out of step": 0,
                      "inferred link whose evidence is gone": 0,
                      "community report citing a deleted chunk": 0, "community size disagrees with its members": 0,
                      "community report older than its members": 0, "tag on nothing": 0,
                      "community without members": 0, "entity id held twice": 0,
                      "entity key held twice in a group": 0, "community id held twice": 0, "mention edge twice": 0,
                      "relation edge twice": 0, "RST edge twice": 0, "tag edge twice": 0, "membership edge twice": 0,
                      "link without its context embedding": 0, "chunk without its text or embedding": 0}
    assert rows["broken_links"][0]["unresolved"] >= 1  # the site links to a page it does not have
    patterns = {(row["source"], row["type"], row["target"]) for row in rows["graph_schema"]}
    assert {("Section", "LINKS_TO", "Section"), ("Chunk", "MENTIONS", "Entity"), ("Chunk", "RST", "Chunk"),
            ("Entity", "IN_COMMUNITY", "Community")} <= patterns


def test_integrity_checks_find_an_orphan(full_graph):
    full_graph.query("CREATE (:Chunk {id: 'orphan', text: 'x'})", write=True)
    rows = full_graph.query(explore_query("integrity_checks").text)
    orphan = next(row for row in rows if row["check"] == "chunk without section")
    assert orphan["failing"] == 1 and orphan["examples"] == ["orphan"]
    full_graph.query("MATCH (c:Chunk)-[r:MENTIONS]->(e:Entity) WITH c, e, r LIMIT 1 "
                     "CREATE (c)-[:MENTIONS {origin_id: r.origin_id}]->(e)", write=True)  # what a CREATE would do
    full_graph.query("CREATE (:Community {id: 'lonely'})", write=True)  # ids held twice the constraint refuses
    failing = {row["check"]: row["failing"] for row in full_graph.query(explore_query("integrity_checks").text)}
    assert failing["mention edge twice"] == 1 and failing["community id held twice"] == 0
    assert failing["community without members"] == 1 and failing["relation edge twice"] == 0
    assert failing["relation citing a deleted chunk"] == 0
    full_graph.query("MATCH ()-[r:RELATED]->() WITH r LIMIT 2 "
                     "SET r.chunk_ids = coalesce(r.chunk_ids, [r.chunk_id]) + 'gone#_s0:0', r.chunk_id = null",
                     write=True)  # what forgetting a deleted chunk's evidence used to leave behind
    failing = {row["check"]: row for row in full_graph.query(explore_query("integrity_checks").text)}
    cited = failing["relation citing a deleted chunk"]
    assert cited["failing"] == 2 and all(example.endswith("cites gone#_s0:0") for example in cited["examples"])


def test_unknown_saved_query():
    with pytest.raises(StatementError, match="no saved query named 'nope'"):
        explore_query("nope")


def test_browser_guide_sets_real_parameters_for_each_saved_query(full_graph):
    from neoweave.audit.guide import browser_guide

    guide = browser_guide(full_graph)
    assert guide.startswith('<article class="guide">') and guide.count("<slide") == len(explore_names()) + 2
    name = full_graph.query("MATCH (e:Entity) RETURN e.name AS v ORDER BY coalesce(e.mention_count, 0) DESC, e.id "
                            "LIMIT 1")[0]["v"]
    assert f":param name =&gt; &quot;{name}&quot;" in guide
    doc_id = full_graph.query("MATCH (d:Document) WHERE d.links_resolved > 0 RETURN d.id AS v "
                              "ORDER BY d.links_resolved DESC, d.id LIMIT 1")[0]["v"]
    assert f":param doc_id =&gt; &quot;{doc_id}&quot;" in guide  # an id that exists, so the slide draws something
    assert ":param min_weight =&gt; 5.0" in guide and "MATCH (d:Document {id: $doc_id})" in guide
