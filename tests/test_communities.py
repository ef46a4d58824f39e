"""Communities: deterministic hierarchical Leiden, the partition and reports in the graph, incremental reruns."""

from __future__ import annotations

import itertools
import random

import pytest
from conftest import COMMUNITY_CORPUS, ingest_records

from neoweave.enrich import run
from neoweave.enrich.community_reports import (
    FastReporter,
    MemberEntity,
    MemberRelation,
    ReportContext,
    SourceChunk,
    fast_rating,
)
from neoweave.enrich.leiden import Community, detect, entity_edges, level_cut
from neoweave.errors import NeoweaveError


def _cliques(groups: int, size: int) -> list[dict]:
    """`groups` dense groups of `size` nodes, each group tied to the next by one light edge."""
    rows = []
    for g in range(groups):
        nodes = [f"g{g}n{i}" for i in range(size)]
        rows += [{"source": a, "target": b, "weight": 3.0} for a, b in itertools.combinations(nodes, 2)]
        rows.append({"source": nodes[0], "target": f"g{(g + 1) % groups}n0", "weight": 0.1})
    return rows


def _nested(groups: int = 3, subgroups: int = 3, size: int = 4) -> list[dict]:
    """Groups of tight subgroups (weight 3 inside, 0.4 between subgroups of a group, 0.1 between groups)."""
    rows = []
    for g in range(groups):
        subs = [[f"g{g}s{s}n{i}" for i in range(size)] for s in range(subgroups)]
        for sub in subs:
            rows += [{"source": a, "target": b, "weight": 3.0} for a, b in itertools.combinations(sub, 2)]
        for one, other in itertools.combinations(subs, 2):
            rows += [{"source": a, "target": b, "weight": 0.4} for a in one for b in other]
        rows.append({"source": f"g{g}s0n0", "target": f"g{(g + 1) % groups}s0n0", "weight": 0.1})
    return rows


def test_same_graph_same_communities_whatever_the_edge_order():
    rows = [*_cliques(4, 6), {"source": "x", "target": "y", "weight": 1.0}]
    first = detect(entity_edges(rows))
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    flipped = [{"source": r["target"], "target": r["source"], "weight": r["weight"]} for r in shuffled]
    assert [(c.id, c.members) for c in detect(entity_edges(flipped))] == [(c.id, c.members) for c in first]
    assert {c.members for c in first if c.level == 0} == {tuple(sorted(f"g{g}n{i}" for i in range(6)))
                                                         for g in range(4)}
    # the pair x-y is one relation, not a community; nothing has fewer than min_size members
    assert all(c.size >= 3 for c in first) and not any("x" in c.members for c in first)
    assert detect(entity_edges(rows), seed=1) is not None  # another seed runs (may or may not differ)


def test_large_communities_are_split_into_a_hierarchy():
    communities = detect(entity_edges(_nested()), max_cluster_size=5, min_size=2)
    by_id = {c.id: c for c in communities}
    assert sorted(c.size for c in communities if c.level == 0) == [12, 12, 12]  # over 5: split again
    assert sorted(c.size for c in communities if c.level == 1) == [4] * 9
    for child in (c for c in communities if c.level > 0):
        parent = by_id[child.parent_id]
        assert parent.level == child.level - 1 and set(child.members) <= set(parent.members)
        assert child.id in parent.children
    # every clustered entity has exactly one leaf community, the deepest one holding it
    leaves = [node for c in communities for node in c.leaf_members]
    assert sorted(leaves) == sorted({n for c in communities for n in c.members})
    for community in communities:
        assert all(not any(node in by_id[child].members for child in community.children)
                   for node in community.leaf_members)
    # a level cut covers every entity once
    for level in range(max(c.level for c in communities) + 1):
        covered = [node for c in level_cut(communities, level) for node in c.members]
        assert len(covered) == len(set(covered)) == 36


def test_fast_report_is_extractive_and_rated():
    community = Community("community:0:x", 0, ("a", "b", "c"))
    context = ReportContext(
        community,
        [MemberEntity("a", "Lothair II", "person", mentions=5), MemberEntity("b", "Lotharingia", "location",
                                                                             mentions=3),
         MemberEntity("c", "Aachen", "location", mentions=1)],
        [MemberRelation("a", "b", "related", "Lothair II ruled Lotharingia.", 4.0, ["k1"]),
         MemberRelation("b", "c", "related", "Lotharingia had its capital at Aachen.", 1.0, ["k2"])],
        [SourceChunk("k1", "Lothair II ruled Lotharingia. It rained.", [1.0, 0.0], 2),
         SourceChunk("k2", "Lotharingia had its capital at Aachen. Aachen is old.", [0.9, 0.1], 2)])
    report = FastReporter(summary_sentences=2).report(context)
    assert report.title == "Lotharingia, Lothair II and Aachen"  # weighted degree inside the community
    assert "Lothair II ruled Lotharingia." in report.summary and "It rained." not in report.summary
    assert [f.explanation for f in report.findings] == ["Lothair II ruled Lotharingia.",
                                                       "Lotharingia had its capital at Aachen."]
    assert report.rating == fast_rating(9) and set(report.chunk_ids) == {"k1", "k2"}
    assert "## Entities" in report.full_report(context)


def test_fast_rating_is_a_fixed_scale_of_the_communitys_own_mentions():
    """Not scaled by the level's largest community: a report kept as unchanged rates as one written anew."""
    assert fast_rating(0) == 0.0 and fast_rating(10_000) == 10.0 and fast_rating(10**7) == 10.0
    assert fast_rating(9) == 2.5 and fast_rating(99) == 5.0 and fast_rating(99) < fast_rating(999)


def _communities(store):
    return store.query("MATCH (c:Community) RETURN c.id AS id, c.level AS level, c.size AS size, c.title AS title, "
                       "c.summary AS summary, c.embedding IS NOT NULL AS embedded, c.rating AS rating, "
                       "c.method AS method, c.full_report AS report ORDER BY id")


def test_communities_in_the_graph_with_reports_and_reruns(kg_graph, embedder, tmp_path):
    store = kg_graph
    report = run("communities", store, embedder=embedder, progress=False, max_cluster_size=6)
    communities = _communities(store)
    assert len(communities) >= 2 and report.counters["reports_written"] == len(communities)
    # Lothair's 10-entity community is over max_cluster_size: split one level down, linked to its parent
    parents = store.query("MATCH (c:Community)-[:PARENT_COMMUNITY]->(p:Community) RETURN c.level AS c, p.level AS p")
    assert parents and all(r["c"] == r["p"] + 1 for r in parents)
    assert all(c["title"] and c["summary"] and c["embedded"] and c["method"] == "fast" and c["report"]
               for c in communities)
    # each report's prompt size is counted once, when written (community_local reads it)
    counted = store.query("MATCH (c:Community) RETURN c.full_report AS report, c.token_count AS n ORDER BY c.id")
    assert [r["n"] for r in counted] == embedder.count_tokens([r["report"] for r in counted])
    # leaf membership: an entity belongs to at most one community directly; sizes match the members below
    members = store.query("MATCH (e:Entity)-[:IN_COMMUNITY]->(c:Community) RETURN e.id AS e, c.id AS c")
    assert len({m["e"] for m in members}) == len(members)
    sizes = {r["id"]: r["n"] for r in store.query(
        "MATCH (e:Entity)-[:IN_COMMUNITY]->(:Community)-[:PARENT_COMMUNITY*0..]->(c:Community) "
        "RETURN c.id AS id, count(DISTINCT e) AS n")}
    assert sizes == {c["id"]: c["size"] for c in communities}
    # the two topics are apart: no community holds both Lothair II and Guido van Rossum
    together = store.query("MATCH (a:Entity {key: 'lothair ii'})-[:IN_COMMUNITY]->(:Community)"
                           "-[:PARENT_COMMUNITY*0..]->(c:Community)<-[:PARENT_COMMUNITY*0..]-(:Community)"
                           "<-[:IN_COMMUNITY]-(b:Entity {key: 'guido van rossum'}) RETURN c.id")
    assert not together
    # the Browser statement draws a community with its members and their relations
    shown = store.run("community_show", {"community_id": communities[0]["id"]})
    assert shown and shown[0]["members"]
    # a rerun on the same graph changes nothing and writes no report
    again = run("communities", store, embedder=embedder, progress=False, max_cluster_size=6)
    assert again.counters.get("reports_written", 0) == 0 and "communities_created" not in again.counters
    assert _communities(store) == communities
    # a new document touching one topic: only the communities whose members or relations changed get new reports
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", [*COMMUNITY_CORPUS, {
        "id": "p3", "title": "Monty Python",
        "text": "Monty Python inspired Guido van Rossum. Monty Python and Python share a name. Monty Python was "
                "a comedy group from Britain. Britain and Monty Python made films."}])
    run("kg", store, embedder=embedder, progress=False, n_process=1)
    third = run("communities", store, embedder=embedder, progress=False, max_cluster_size=6)
    after = {c["id"]: c for c in _communities(store)}
    lothair = [c for c in communities if "Lothair" in c["title"] or "Waldrada" in c["title"]
               or "Teutberga" in c["title"]]
    assert lothair and all(after.get(c["id"]) == c for c in lothair)  # untouched topic: same ids, same reports
    assert third.counters["reports_kept"] >= len(lothair)
    assert 0 < third.counters["reports_written"] < len(after)


def test_communities_parameter_errors(kg_graph, embedder):
    with pytest.raises(NeoweaveError, match="max_cluster_size"):
        run("communities", kg_graph, embedder=embedder, max_cluster_size=0)
    with pytest.raises(NeoweaveError, match="method must be one of"):
        run("communities", kg_graph, embedder=embedder, method="bogus")


def test_community_local_packs_reports_relations_and_chunks_within_the_budget(kg_graph, embedder):
    from neoweave.query import strategy
    from neoweave.query.prompts import get_prompt, render

    run("communities", kg_graph, embedder=embedder, progress=False, max_cluster_size=6)
    local = strategy("community_local", kg_graph, embedder)
    result = local.retrieve("Who was the mistress of Lothair II?")
    lothair = kg_graph.query("MATCH (e:Entity {key: 'lothair ii'}) RETURN e.id AS id")[0]["id"]
    assert result.reports and all(r.entity_ids for r in result.reports)
    assert any(lothair in r.entity_ids for r in result.reports)
    assert any("Lothair II" in (f.source, f.target) for f in result.facts)
    assert any(lothair in item.details.get("entities", []) for item in result.items)  # chunks mentioning it
    assert 0 < result.context_tokens <= local.max_context_tokens
    assert (lothair, "IN_COMMUNITY", result.reports[0].community_id) in result.trace.relationships
    assert {"local_entity_communities", "local_entity_chunks"} <= set(result.trace.statements)
    # reports lead the prompt, before facts and chunks
    prompt = render(get_prompt("short_answer"), result)[1]["content"]
    first_chunk = f"[1] {result.items[0].section_title or result.items[0].doc_id}\n{result.items[0].text}"
    assert prompt.index("Community reports") < prompt.index("Facts (relations") < prompt.index(first_chunk)
    # a smaller budget keeps less, never more than asked
    small = local.retrieve("Who was the mistress of Lothair II?", max_context_tokens=120)
    assert small.context_tokens <= 120 and small.context_tokens < result.context_tokens
    with pytest.raises(NeoweaveError, match="text_unit_prop"):
        local.retrieve("x", text_unit_prop=0.9, community_prop=0.3)
