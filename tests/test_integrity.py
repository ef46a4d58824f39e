"""The graph's invariants as the saved `integrity_checks` query states them: a clean enriched graph (documents,
entities, communities, tags, RST) passes every check, and each check finds exactly the one violation planted in a
copy of it (one Cypher write), no other check moving."""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
from pathlib import Path

import pytest
from conftest import COMMUNITY_CORPUS, ingest_records

from neoweave.cypher.registry import explore_query
from neoweave.enrich import run
from neoweave.ingest import GraphWriter, IngestOptions, Ingestor, SourceOptions
from neoweave.store.falkordb_store import FalkorDBStore

CHECKS = {
    "chunk without its text or embedding", "link without its context embedding",
    "chunk without section", "section without document", "entity without mention", "relation citing a deleted chunk",
    "relation evidence out of step", "mention forms out of step", "entity counts out of step",
    "inferred link whose evidence is gone",
    "community report citing a deleted chunk", "community size disagrees with its members",
    "community report older than its members", "tag on nothing", "community without members",
    "entity id held twice", "entity key held twice in a group", "community id held twice", "mention edge twice",
    "relation edge twice", "RST edge twice", "tag edge twice", "membership edge twice",
}


def _failing(store) -> dict[str, int]:
    return {row["check"]: row["failing"] for row in store.query(explore_query("integrity_checks").text)
            if row["failing"]}


@pytest.fixture(scope="module")
def template(falkordb_server, embedder, tmp_path_factory):
    """Site pages (authored links) and the community corpus, with every enrich step's fast method."""
    store = FalkorDBStore(server=falkordb_server, graph=f"integrity_{uuid.uuid4().hex[:12]}")
    folder = tmp_path_factory.mktemp("integrity")
    site = folder / "site"
    shutil.copytree(Path(__file__).parent / "data" / "site", site)
    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    ingest_records(store, embedder, folder / "corpus.jsonl", COMMUNITY_CORPUS)
    run("kg", store, embedder=embedder, progress=False, n_process=1)
    run("communities", store, embedder=embedder, progress=False, max_cluster_size=6)
    run("tags", store, embedder=embedder, progress=False)
    run("rst", store, embedder=embedder, progress=False, window=2, similar=1, min_weight=0.5)
    yield store
    with contextlib.suppress(Exception):
        store._graph_handle().delete()
    store.close()


@pytest.fixture
def graph(template, falkordb_server):
    """A copy of the template graph (GRAPH.COPY) to plant one violation in."""
    name = f"{template.graph_name}_{uuid.uuid4().hex[:8]}"
    template._graph_handle().copy(name)
    store = FalkorDBStore(server=falkordb_server, graph=name)
    yield store
    with contextlib.suppress(Exception):
        store._graph_handle().delete()
    store.close()


def test_a_clean_enriched_graph_passes_every_check(template):
    rows = template.query(explore_query("integrity_checks").text)
    assert {row["check"] for row in rows} == CHECKS and len(rows) == len(CHECKS)
    assert {row["check"]: row["failing"] for row in rows if row["failing"]} == {}
    # every kind of element the checks read is there (else a check passing would say nothing)
    present = template.query(
        "MATCH (c:Community) WHERE c.report_fingerprint IS NOT NULL AND size(c.chunk_ids) > 0 "
        "WITH count(c) AS reports MATCH ()-[l:LINKS_TO {method: 'inferred'}]->() "
        "WITH reports, count(l) AS inferred MATCH ()-[m:MENTIONS]->() WHERE size(m.origin_ids) > 1 "
        "WITH reports, inferred, count(m) AS folded MATCH (:Community)-[p:PARENT_COMMUNITY]->(:Community) "
        "WITH reports, inferred, folded, count(p) AS parents MATCH ()-[r:RST]->() "
        "WITH reports, inferred, folded, parents, count(r) AS rst MATCH (:Chunk)-[t:TAGGED]->() "
        "RETURN reports, inferred, folded, parents, rst, count(t) AS tagged")[0]
    assert all(present.values()), present


PLANTED = {
    # what a strategy cannot use: retrieval would have nothing to rank by (larag and ppr skip such a link)
    "chunk without its text or embedding": "MATCH (c:Chunk) WITH c ORDER BY c.id LIMIT 1 SET c.embedding = null",
    "chunk without its text or embedding (text)": "MATCH (c:Chunk) WITH c ORDER BY c.id LIMIT 1 SET c.text = null",
    "link without its context embedding": (
        "MATCH ()-[l:LINKS_TO]->() WHERE l.method = 'authored' WITH l LIMIT 1 SET l.context_embedding = null"),
    "link without its context embedding (inferred)": (
        "MATCH ()-[l:LINKS_TO]->() WHERE l.method = 'inferred' WITH l LIMIT 1 SET l.context_embedding = null"),
    "chunk without section": "CREATE (:Chunk {id: 'orphan', text: 'x', embedding: vecf32([i IN range(1, 384) | 0.1])})",
    "section without document": "CREATE (:Section {id: 'orphan#s'})",
    # an entity no chunk mentions; one the caller imported (kg_import marks its method) may stand alone
    "entity without mention": "CREATE (:Entity:__Entity__ {id: 'person:ghost', key: 'ghost', method: 'fast'}), "
                              "(:Entity:__Entity__ {id: 'person:given', key: 'given', method: 'import'})",
    "relation citing a deleted chunk": (
        "MATCH ()-[r:RELATED]->() WHERE r.chunk_ids IS NOT NULL WITH r LIMIT 1 "
        "SET r.chunk_ids = r.chunk_ids + 'gone#_s0:0', r.chunk_weights = r.chunk_weights + 0.0, "
        "r.descriptions = r.descriptions + 'gone'"),
    "relation citing a deleted chunk (one chunk)": (
        "MATCH ()-[r:RELATED]->() WHERE r.chunk_ids IS NULL WITH r LIMIT 1 SET r.chunk_id = 'gone#_s0:0'"),
    "relation evidence out of step": (
        "MATCH ()-[r:RELATED]->() WHERE r.chunk_ids IS NOT NULL WITH r LIMIT 1 SET r.weight = r.weight + 1.0"),
    "relation evidence out of step (lists)": (
        "MATCH ()-[r:RELATED]->() WHERE r.chunk_ids IS NOT NULL WITH r LIMIT 1 "
        "SET r.descriptions = r.descriptions + 'one too many'"),
    "relation evidence out of step (one chunk as lists)": (
        "MATCH ()-[r:RELATED]->() WHERE r.chunk_ids IS NULL WITH r LIMIT 1 SET r.chunk_weights = [r.weight]"),
    "mention forms out of step": (  # (the entity's count follows, or its own check would move too)
        "MATCH ()-[m:MENTIONS]->(e:Entity) WHERE m.origin_ids IS NOT NULL WITH m, e LIMIT 1 "
        "SET m.count = m.count + 1, e.mention_count = e.mention_count + 1"),
    "mention forms out of step (lists)": (
        "MATCH ()-[m:MENTIONS]->() WHERE m.origin_ids IS NOT NULL WITH m LIMIT 1 SET m.names = m.names + 'extra'"),
    "mention forms out of step (one form as lists)": (
        "MATCH ()-[m:MENTIONS]->() WHERE m.origin_ids IS NULL WITH m LIMIT 1 SET m.names = [m.name]"),
    "mention forms out of step (one form without its context)": (
        "MATCH ()-[m:MENTIONS]->() WHERE m.origin_ids IS NULL WITH m LIMIT 1 SET m.context = null"),
    "inferred link whose evidence is gone": (
        "MATCH ()-[l:LINKS_TO]->() WHERE l.method = 'inferred' WITH l LIMIT 1 SET l.chunk_id = 'gone#_s0:0'"),
    "community report citing a deleted chunk": (
        "MATCH (m:Community) WHERE size(m.chunk_ids) > 0 WITH m LIMIT 1 "
        "SET m.chunk_ids = m.chunk_ids + 'gone#_s0:0'"),
    "community size disagrees with its members": "MATCH (m:Community) WITH m LIMIT 1 SET m.size = m.size + 1",
    "community report older than its members": (
        "MATCH (m:Community) WHERE m.report_fingerprint IS NOT NULL WITH m LIMIT 1 "
        "MATCH (state:Meta {id: 'communities'}) SET state.members_changed = [m.id]"),
    "tag on nothing": "CREATE (:Tag {name: 'lonely tag'})",
    "entity counts out of step": "MATCH (e:Entity) WITH e LIMIT 1 SET e.mention_count = e.mention_count + 1",
    "community without members": "CREATE (:Community {id: 'community:9:lonely'})",
    # a second entity of one type group and key (mentioned, so it is not also an entity without mention)
    "entity key held twice in a group": (
        "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE e.id STARTS WITH 'person:' WITH c, e LIMIT 1 "
        "CREATE (c)-[:MENTIONS {origin_id: 'person:twin', name: 'Twin', type: 'person', count: 1, context: '', "
        "method: 'fast', source: 'test'}]->"
        "(:Entity:__Entity__ {id: e.id + ' (twin)', key: e.key, method: 'fast'})"),
    "mention edge twice": (
        "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WITH c, m, e LIMIT 1 "
        "CREATE (c)-[n:MENTIONS]->(e) SET n += properties(m), "
        "e.mention_count = e.mention_count + m.count"),
    "relation edge twice": (
        "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WITH a, r, b LIMIT 1 CREATE (a)-[n:RELATED]->(b) "
        "SET n += properties(r), a.relation_count = a.relation_count + 1, b.relation_count = b.relation_count + 1"),
    "RST edge twice": (
        "MATCH (a:Chunk)-[r:RST]->(b:Chunk) WITH a, r, b LIMIT 1 "
        "CREATE (a)-[:RST {relation: r.relation, weight: r.weight}]->(b)"),
    "tag edge twice": (
        "MATCH (x:Chunk)-[r:TAGGED]->(t:Tag) WITH x, r, t LIMIT 1 "
        "CREATE (x)-[:TAGGED {rank: r.rank, weight: r.weight, method: r.method}]->(t)"),
    "membership edge twice": (
        "MATCH (e:Entity)-[r:IN_COMMUNITY]->(m:Community) WITH e, r, m LIMIT 1 "
        "CREATE (e)-[:IN_COMMUNITY {level: r.level}]->(m)"),
}


def test_every_check_that_can_fail_has_a_planted_violation():
    # ids are unique keys: a second Entity or Community with an id is refused (next test), never stored
    assert {name.split(" (")[0] for name in PLANTED} == CHECKS - {"entity id held twice", "community id held twice"}


@pytest.mark.parametrize("planted", sorted(PLANTED))
def test_each_check_finds_exactly_its_planted_violation(graph, planted):
    graph.query(PLANTED[planted], write=True)
    assert _failing(graph) == {planted.split(" (")[0]: 1}


def test_a_second_node_with_an_id_is_refused(graph):
    for cypher in ("MATCH (e:Entity) WITH e LIMIT 1 CREATE (:Entity {id: e.id, key: e.key})",
                   "MATCH (m:Community) WITH m LIMIT 1 CREATE (:Community {id: m.id})"):
        with pytest.raises(Exception, match=r"(?i)constraint|unique"):
            graph.query(cypher, write=True)
    assert _failing(graph) == {}


def test_deleting_a_document_makes_its_communities_stale_until_they_are_redone(graph, embedder):
    """Forgetting a document's chunks marks the communities of the entities they mention (and those above them):
    their reports are older than their members; the communities step rewrites them and the graph is clean again."""
    assert graph.query("MATCH (s:Meta {id: 'communities'}) RETURN s.members_changed AS ids") == [{"ids": None}]
    GraphWriter(graph).delete_documents(["k2"])  # Waldrada: its only entities go, others lose mentions
    failing = _failing(graph)
    assert failing.get("community report older than its members", 0) >= 1
    assert set(failing) <= {"community report older than its members", "community size disagrees with its members",
                            "community report citing a deleted chunk"}
    report = run("communities", graph, embedder=embedder, progress=False, max_cluster_size=6)
    assert report.counters["reports_written"] >= 1
    assert _failing(graph) == {}
    assert graph.query("MATCH (s:Meta {id: 'communities'}) RETURN s.members_changed AS ids") == [{"ids": None}]


def test_a_document_deleted_or_rewritten_leaves_no_count_of_its_old_text(graph, embedder, tmp_path):
    """Entities keep mention and relation counts (ppr's hub control, kg's hub cut, inverse-frequency weights):
    forgetting chunks outside `enrich kg` recounts the entities they touched at once."""
    counts = "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.mention_count AS mentions ORDER BY id"
    touched = [row["id"] for row in graph.run("kg_forgotten_entities", {"chunk_ids": [
        row["id"] for row in graph.run("document_chunk_ids", {"doc_ids": ["k1", "k2"]})]})]
    before = graph.query(counts, {"ids": touched})
    GraphWriter(graph).delete_documents(["k2"])
    ingest_records(graph, embedder, tmp_path / "changed.jsonl", [  # k1 rewritten, not yet enriched again
        {**next(r for r in COMMUNITY_CORPUS if r["id"] == "k1"), "text": "Lothair II was a king. He lived."}])
    assert "entity counts out of step" not in _failing(graph)
    after = graph.query(counts, {"ids": touched})
    assert after != before and len(after) < len(before)  # counts went down; entities only k2 named are gone


def test_new_mentions_of_members_make_their_communities_stale_until_they_are_redone(graph, embedder, tmp_path):
    """The kg writes mark the communities of the entities a new chunk mentions: their reports no longer count
    those mentions (and may miss a better source chunk)."""
    ingest_records(graph, embedder, tmp_path / "more.jsonl", [
        {"id": "k4", "title": "Hugh", "text": "Hugh was the son of Lothair II and Waldrada. Hugh lived in Aachen."}])
    run("kg", graph, embedder=embedder, progress=False, n_process=1)
    assert _failing(graph).get("community report older than its members", 0) >= 1
    run("communities", graph, embedder=embedder, progress=False, max_cluster_size=6)
    assert _failing(graph) == {}


def test_kb_check_and_the_check_command_report_a_planted_violation(cli, workdir):
    """`neoweave check` (KnowledgeBase.check) runs the same invariants: all pass on a fresh graph, a planted unused
    tag fails one, and the command's exit status says so."""
    (workdir / "docs").mkdir()
    (workdir / "docs" / "a.md").write_text("# Ada\n\nAda Lovelace wrote the first program for the Analytical "
                                           "Engine of Charles Babbage.\n", encoding="utf-8")
    cli("ingest", "docs", "--no-progress")
    assert "all " in cli("check").stdout
    cli("cypher", "CREATE (:Tag {name: 'planted'})", "--write")
    result = cli("check", "--json", check=False)
    assert result.returncode == 1
    failing = {row["check"]: row["failing"] for row in json.loads(result.stdout) if row["failing"]}
    assert failing == {"tag on nothing": 1}, failing
