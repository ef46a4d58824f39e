"""`explain`: a retrieval's trace read back from the real graph as nodes with roles and relationships with their
meaning; the Browser statement draws the same edges; the HTML page is self-contained."""

from __future__ import annotations

import json
import re

import pytest
from test_query import EVENT_LOOP_Q
from test_query_kg import RECORDS

from neoweave.audit import cypher_literal, explain, render_html
from neoweave.enrich import run
from neoweave.enrich.tag_paths import SEPARATOR
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.query import strategy


@pytest.fixture
def site_graph(falkordb_store, embedder, site):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    return falkordb_store


def _browser_rows(store, explanation) -> int:
    return len(store.run("explain_subgraph", explanation.browser_parameters()))


def test_larag_explanation_has_seed_link_and_the_link_context(site_graph, embedder):
    result = strategy("larag", site_graph, embedder, k=1).retrieve(EVENT_LOOP_Q)
    explanation = explain(result, site_graph)
    seed, linked = result.items
    assert explanation.node(seed.chunk_id).role == "seed" and explanation.node(seed.chunk_id).rank == 1
    link_node = explanation.node(linked.chunk_id)
    assert link_node.role == "link" and link_node.hop == 1 and link_node.rank == 2
    assert link_node.text == linked.text and link_node.label == "Chunk"
    link = next(r for r in explanation.relationships if r.type == "LINKS_TO")
    assert (link.source, link.target) == (seed.section_id, linked.section_id)
    assert link.stored and "garbage collection" in link.detail  # the anchor text and its sentence
    assert explanation.node(seed.doc_id).role == "document"  # the page the seed came from
    assert any(r.type == "HAS_SECTION" and r.target == seed.section_id for r in explanation.relationships)
    assert explanation.missing == [] and all(r.stored for r in explanation.relationships)
    assert link.traced and not next(r for r in explanation.relationships if r.type == "HAS_SECTION").traced
    # the Browser statement draws exactly the stored edges (every node here is on one)
    assert explanation.browser_parameters()["nodes"] == []
    assert _browser_rows(site_graph, explanation) == len(explanation.relationships)
    assert json.loads(json.dumps(explanation.as_dict()))["strategy"] == "larag"


def test_html_page_is_self_contained_and_escapes_text(site_graph, embedder):
    question = "event loop </script><script>alert(1)</script>"
    explanation = explain(strategy("larag", site_graph, embedder, k=1).retrieve(question), site_graph,
                          answer="<b>bold</b>")
    page = render_html(explanation)
    assert "<script>alert(1)" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert re.search(r"<b>Statements:</b> [^<]*chunk_vector_search \d+\.\d ms", page)  # where the graph time went
    assert "src=\"http" not in page and "href=\"http" not in page  # opens offline: the renderer is inlined
    data = page[page.rindex('id="neo4j-viz-data">') + len('id="neo4j-viz-data">'):]
    graph = json.loads(data[:data.index("</script>")])
    assert {node["id"] for node in graph["nodes"]} == {node.id for node in explanation.nodes}
    assert {rel["caption"] for rel in graph["relationships"]} >= {"LINKS_TO", "HAS_CHUNK"}


def test_kg_explanation_shows_entities_relations_and_mentions(falkordb_store, embedder, tmp_path):
    from conftest import ingest_records

    ingest_records(falkordb_store, embedder, tmp_path / "kg.jsonl", RECORDS)
    run("kg", falkordb_store, embedder=embedder, progress=False)
    result = strategy("kg", falkordb_store, embedder).retrieve("Who taught Margit Halden?")
    explanation = explain(result, falkordb_store)
    entities = [node for node in explanation.nodes if node.label == "Entity"]
    assert entities and all(node.role == "entity" for node in entities)
    assert any(node.rank == 1 for node in entities)  # the first fact's ends
    related = [r for r in explanation.relationships if r.type == "RELATED"]
    assert related and all(r.stored and r.detail for r in related)  # type: description, as stored
    # the context chunks are tied to the entities they mention, marked as not walked by the strategy
    mentions = [r for r in explanation.relationships if r.type == "MENTIONS"]
    assert mentions and all(r.stored and not r.traced for r in mentions)
    assert {r.target for r in mentions} <= {node.id for node in entities}
    assert _browser_rows(falkordb_store, explanation) == len(explanation.relationships) + len(
        explanation.browser_parameters()["nodes"])


def test_a_trace_of_a_changed_graph_says_what_is_gone(site_graph, embedder):
    result = strategy("larag", site_graph, embedder, k=1).retrieve(EVENT_LOOP_Q)
    linked = result.items[1]
    site_graph.run("delete_document_chunks", {"doc_ids": [linked.doc_id]}, write=True)
    explanation = explain(result, site_graph)
    assert linked.chunk_id in explanation.missing and explanation.node(linked.chunk_id) is None
    gone = [r for r in explanation.relationships if r.target == linked.chunk_id]
    assert gone and not any(r.stored for r in gone)
    assert _browser_rows(site_graph, explanation) == sum(r.stored for r in explanation.relationships)


def test_browser_parameters_are_a_cypher_map():
    literal = cypher_literal({"edges": [{"source": 'a"b\\c', "type": "RST", "target": "x\ny"}], "nodes": [],
                              "n": 1.5, "f": False, "z": None})
    assert literal == '{edges: [{source: "a\\"b\\\\c", type: "RST", target: "x\\ny"}], nodes: [], n: 1.5, ' \
                      'f: false, z: null}'


def test_orion_explanation_shows_the_tags_of_each_tag_path(falkordb_store, embedder, tmp_path):
    from conftest import ingest_records
    from test_orion import BANKS

    ingest_records(falkordb_store, embedder, tmp_path / "banks.jsonl", BANKS)
    run("tags", falkordb_store, embedder=embedder, progress=False)
    result = strategy("orion", falkordb_store, embedder, k=2, expand=False, prune=False).retrieve(
        "diversified business model")
    explanation = explain(result, falkordb_store)
    tagged = [r for r in explanation.relationships if r.type == "TAGGED"]
    assert tagged and all(r.stored and r.target.startswith("tag:") for r in tagged)
    first = result.items[0]
    path_tags = {"tag:" + name for name in first.details["tag_path"].split(SEPARATOR)}
    shown = {r.target for r in tagged if r.source in (first.chunk_id, first.doc_id)}
    assert shown == path_tags, (shown, path_tags)
    assert all(explanation.node(tag).role == "tag" for tag in shown)
    assert _browser_rows(falkordb_store, explanation) == len(explanation.relationships) - sum(
        not r.stored for r in explanation.relationships)


def test_community_and_walk_explanations(kg_graph, embedder):
    run("communities", kg_graph, embedder=embedder, progress=False, max_cluster_size=6)
    local = explain(strategy("community_local", kg_graph, embedder).retrieve("Who founded the Python Software "
                                                                               "Foundation?"), kg_graph)
    communities = [node for node in local.nodes if node.label == "Community"]
    assert communities and all(node.role == "community" and node.rank for node in communities)
    assert any(r.type == "IN_COMMUNITY" and r.stored for r in local.relationships)
    walk = strategy("ppr", kg_graph, embedder).retrieve("Where did Guido van Rossum create Python?")
    walked = explain(walk, kg_graph)
    seeds = [node for node in walked.nodes if "seed_share" in node.properties]
    assert seeds and all(node.score is not None for node in walked.nodes if node.id in walk.trace.scores)
    assert {node.role for node in walked.nodes} >= {"walk", "entity"}  # the walk's chunks, its seed entities
    assert all(r.stored for r in walked.relationships), [r for r in walked.relationships if not r.stored]
