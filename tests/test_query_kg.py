"""The kg retriever over a small enriched corpus: linked entities, facts within two hops, fact chunks."""

from __future__ import annotations

import pytest
from conftest import ingest_records

from neoweave.enrich import run
from neoweave.errors import NeoweaveError
from neoweave.query import strategy
from neoweave.query.prompts import get_prompt, render

RECORDS = [
    {"id": "k1", "title": "Margit Halden",
     "text": "Margit Halden was a Norwegian painter. Margit Halden studied with Edvard Munch in Oslo."},
    {"id": "k2", "title": "Edvard Munch",
     "text": "Edvard Munch painted The Scream. Edvard Munch lived at Ekely near Oslo until 1944."},
    {"id": "k3", "title": "Bergen",
     "text": "Bergen is a city on the west coast of Norway. It has a famous fish market."},
]


@pytest.fixture
def enriched(falkordb_store, embedder, tmp_path):
    ingest_records(falkordb_store, embedder, tmp_path / "kg.jsonl", RECORDS)
    run("kg", falkordb_store, embedder=embedder, progress=False)
    return falkordb_store


def test_kg_gives_facts_within_two_hops_with_their_chunks(enriched, embedder):
    result = strategy("kg", enriched, embedder, k=1).retrieve("Who taught Margit Halden?")
    halden = enriched.query("MATCH (e:Entity {key: 'margit halden'}) RETURN e.id AS id")[0]["id"]
    munch = enriched.query("MATCH (e:Entity {key: 'edvard munch'}) RETURN e.id AS id")[0]["id"]
    assert halden in result.trace.nodes  # linked by name
    # (the small NER model reads 'Margit Halden studied ...' as two names; the sentence is the fact either way)
    direct = [f for f in result.facts if munch in (f.source_id, f.target_id) and f.hop == 1]
    assert direct and "studied with Edvard Munch" in direct[0].description
    assert direct[0].chunk_ids and all(c.startswith("k1") for c in direct[0].chunk_ids)
    # hop 2: Munch's own relations (read from k2), scored lower than the hop-1 fact
    second = [f for f in result.facts if f.hop == 2]
    assert second and all(any(c.startswith("k2") for c in f.chunk_ids) for f in second)
    assert max(f.score for f in second) <= max(f.score for f in result.facts if f.hop == 1) + 1e-9
    assert len(result.facts) <= 15 and [f.score for f in result.facts] == sorted((f.score for f in result.facts),
                                                                                 reverse=True)
    # the context: the vector seed, then the best source chunks of the top facts (never twice)
    assert result.items[0].origin == "seed"
    assert len({i.chunk_id for i in result.items}) == len(result.items)
    assert all(i.origin == "fact" and i.details["fact"] for i in result.items[1:])
    assert result.context_tokens > sum(i.token_count for i in result.items)  # facts count as context
    statements = {"kg_link_names", "kg_entity_relations", "chunk_contexts"}
    assert statements <= set(result.trace.statements)
    # each statement's time, summed over its calls (two kg_entity_relations hops), within the graph stage
    assert set(result.trace.statement_ms) == set(result.trace.statements)
    assert all(ms > 0 for ms in result.trace.statement_ms.values())
    assert sum(result.trace.statement_ms.values()) <= result.cost.milliseconds["graph"]
    prompt = render(get_prompt("short_answer"), result)[1]["content"]
    assert prompt.index("Facts (relations") < prompt.index("[1]") and "studied with Edvard Munch" in prompt


def test_kg_one_hop_and_parameter_errors(enriched, embedder):
    one_hop = strategy("kg", enriched, embedder, hops=1, fact_chunks=0).retrieve("Who taught Margit Halden?")
    assert one_hop.facts and {f.hop for f in one_hop.facts} == {1}
    assert [i.origin for i in one_hop.items] == ["seed"] * 3  # k=5 over a three-chunk corpus
    wordless = strategy("kg", enriched, embedder).retrieve("???")  # no words to match: vectors alone link
    assert "kg_entity_vector_search" in wordless.trace.statements
    assert not {"kg_link_entities", "kg_link_names"} & set(wordless.trace.statements)
    nothing = strategy("kg", enriched, embedder, hops=0).retrieve("Who taught Margit Halden?")
    assert nothing.facts == []
    with pytest.raises(NeoweaveError, match="hops must be 0, 1 or 2"):
        strategy("kg", enriched, embedder, hops=3).retrieve("x")
    from neoweave.query.kg import KGRetriever
    assert KGRetriever.parse_parameter("max_facts=7") == ("max_facts", 7)
    with pytest.raises(NeoweaveError, match="takes a float"):
        KGRetriever.parse_parameter("hop_decay=much")


def test_kg_links_names_in_any_word_order_by_full_text_unless_switched_off(enriched, embedder):
    munch = enriched.query("MATCH (e:Entity {key: 'edvard munch'}) RETURN e.id AS id")[0]["id"]
    scattered = "Where did Munch, first name Edvard, live?"  # no n-gram of it is the name
    options = {"k": 0, "hops": 0, "entity_k": 0}  # seeds only, none by embedding
    by_fulltext = strategy("kg", enriched, embedder, link_fulltext=True, **options).retrieve(scattered)
    assert munch in by_fulltext.trace.nodes and "kg_link_entities" in by_fulltext.trace.statements
    names_only = strategy("kg", enriched, embedder, **options).retrieve(scattered)  # the default
    assert "kg_link_names" in names_only.trace.statements
    assert "kg_link_entities" not in names_only.trace.statements
    assert munch not in names_only.trace.nodes
    exact = strategy("kg", enriched, embedder, **options).retrieve("What did Edvard Munch paint?")
    assert munch in exact.trace.nodes


def test_kg_does_not_expand_hub_entities_but_reaches_their_relations_from_the_other_end(enriched, embedder):
    degrees = {row["id"]: row["degree"] for row in enriched.query(
        "MATCH (e:Entity)-[:RELATED]-() RETURN e.id AS id, count(*) AS degree")}
    munch = enriched.query("MATCH (e:Entity {key: 'edvard munch'}) RETURN e.id AS id")[0]["id"]
    hub_limit = degrees[munch] - 1  # Munch has the most relations of this corpus: with this limit it is a hub
    question = "What did Edvard Munch paint?"
    seeds = set(strategy("kg", enriched, embedder, k=0, hops=0).retrieve(question).trace.nodes)
    assert munch in seeds
    full = strategy("kg", enriched, embedder, k=0, hops=1).retrieve(question)
    assert any(munch in (f.source_id, f.target_id) and {f.source_id, f.target_id} - seeds for f in full.facts)
    pruned = strategy("kg", enriched, embedder, k=0, hops=1, max_degree=hub_limit).retrieve(question)
    assert munch in pruned.trace.nodes  # still linked
    for fact in pruned.facts:  # every fact was expanded from a linked entity that is no hub
        assert {fact.source_id, fact.target_id} & {e for e in seeds if degrees.get(e, 0) <= hub_limit}
    # a relation with the hub is still found from its other end ('Margit Halden studied with Edvard Munch')
    taught = strategy("kg", enriched, embedder, k=0, hops=1, max_degree=hub_limit).retrieve(
        "Who taught Margit Halden?")
    assert any(munch in (f.source_id, f.target_id) and "studied with Edvard Munch" in f.description
               for f in taught.facts)
    with pytest.raises(NeoweaveError, match="max_degree"):
        strategy("kg", enriched, embedder, max_degree=0).retrieve("x")


def _relation_counts(store) -> tuple[dict[str, int], dict[str, int]]:
    """(relation_count recorded on each entity, relations counted now)."""
    recorded = {row["id"]: row["count"] for row in store.query(
        "MATCH (e:Entity) RETURN e.id AS id, e.relation_count AS count")}
    live = {row["id"]: row["count"] for row in store.query(
        "MATCH (e:Entity) OPTIONAL MATCH (e)-[r:RELATED]-() RETURN e.id AS id, count(r) AS count")}
    return recorded, live


def test_enrich_kg_records_each_entitys_relation_count_and_keeps_it_current(enriched, embedder, tmp_path):
    # the kg retriever decides what is a hub by this number instead of counting edges per question
    recorded, live = _relation_counts(enriched)
    assert recorded == live and max(live.values()) >= 2
    munch = enriched.query("MATCH (e:Entity {key: 'edvard munch'}) RETURN e.id AS id")[0]["id"]
    before = live[munch]
    ingest_records(enriched, embedder, tmp_path / "more.jsonl", [
        {"id": "k4", "title": "Ekely", "text": "Ekely was the home of Edvard Munch. Edvard Munch painted Starry "
                                               "Night at Ekely. Edvard Munch knew Henrik Ibsen."}])
    run("kg", enriched, embedder=embedder, progress=False)
    recorded, live = _relation_counts(enriched)
    assert recorded == live and live[munch] > before


def test_kg_last_hop_leaves_out_relations_that_cannot_enter_the_kept_facts(enriched, embedder, monkeypatch):
    from neoweave.query.base import EVERY_RELATION
    from neoweave.query.kg import KGRetriever

    def facts_and_rows(retriever: KGRetriever) -> tuple[list[tuple], list[int]]:
        rows_per_hop: list[int] = []
        run = retriever._run

        def counting(trace, name, params, **kwargs):
            rows = run(trace, name, params, **kwargs)
            if name == "kg_entity_relations":
                rows_per_hop.append(len(rows))
            return rows

        monkeypatch.setattr(retriever, "_run", counting)
        result = retriever.retrieve("Who taught Margit Halden?")
        return [(f.source_id, f.target_id, f.hop, round(f.score, 9)) for f in result.facts], rows_per_hop

    options = {"k": 0, "fact_chunks": 0, "max_facts": 2, "per_entity": 10}
    cut_facts, cut_rows = facts_and_rows(strategy("kg", enriched, embedder, **options))
    every = strategy("kg", enriched, embedder, **options)
    monkeypatch.setattr(every, "_min_raw_score", lambda facts, hop: EVERY_RELATION)
    all_facts, all_rows = facts_and_rows(every)
    assert len(all_rows) == len(cut_rows) == 2 and cut_rows[0] == all_rows[0]
    assert cut_rows[1] < all_rows[1]  # hop 2 returned fewer rows ...
    assert cut_facts == all_facts and len(cut_facts) == 2  # ... and the same facts were kept
    # the bar by hand: the 2nd best score 0.5, decayed by 0.8 at hop 2 -> a raw score of at least 0.625
    kg = KGRetriever(enriched, embedder, None, hops=2, max_facts=2, hop_decay=0.8)
    found = {frozenset((str(i), "x")): ({"entity_id": str(i), "other_id": "x", "source_id": str(i)}, score, 1)
             for i, score in enumerate([0.9, 0.5, 0.3])}
    assert kg._min_raw_score(found, 1) == EVERY_RELATION  # hop 1 feeds hop 2's frontier: nothing left out
    assert kg._min_raw_score(found, 2) == pytest.approx(0.625)
    assert kg._min_raw_score(dict(list(found.items())[:1]), 2) == EVERY_RELATION  # fewer facts than kept
    assert KGRetriever(enriched, embedder, None, max_facts=2, hop_decay=0.0)._min_raw_score(found, 2) is None
