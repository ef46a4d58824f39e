"""ppr's walk index: built from the real store, the same rows as the `ppr_expand` statement, the same retrieval,
and never used once the graph has changed (the write stamp)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from neoweave.enrich import kg_changes
from neoweave.query import strategy
from neoweave.query.walk_build import build_walk_index
from neoweave.query.walk_expand import expand
from neoweave.query.walk_index import WalkIndex, WalkIndexes
from neoweave.query.walk_relations import relation_candidates
from tests.conftest import COMMUNITY_CORPUS, ingest_records
from tests.test_query_ppr import FILM_ENTITIES, FILM_LINKS, FILMS, _load

QUESTIONS = ["Where was the director of Red Harbor born?", "Who founded the Python Software Foundation?",
             "Which king married Teutberga?", "Which film has the director born first, Red Harbor or Blue Canyon?"]


def _key(row: dict) -> tuple:
    return (row["start_id"], row["start_label"], row["type"], row["end_id"], row["end_label"], row["via_start"],
            row["via_end"], row["weight"], row["entity_id"], row["mentions"], row["entity_type"])


def _same_rows(statement_rows: list[dict], index_rows: list[dict]) -> None:
    assert sorted(map(_key, statement_rows), key=repr) == sorted(map(_key, index_rows), key=repr)
    by_key = {_key(row): row for row in statement_rows}
    for row in index_rows:
        for score in ("start_score", "end_score"):
            expected = by_key[_key(row)][score]
            assert (expected is None) == (row[score] is None)
            if expected is not None:
                assert row[score] == pytest.approx(expected, abs=1e-5)


@pytest.fixture
def both_graphs(falkordb_store, embedder, tmp_path):
    """Films (authored and inferred links, a hub, generic names) and the kg step's own output (relations, homes,
    mention counts) on one graph."""
    from neoweave.enrich import run

    _load(falkordb_store, embedder, FILMS, FILM_ENTITIES, FILM_LINKS)
    ingest_records(falkordb_store, embedder, tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    run("kg", falkordb_store, embedder=embedder, progress=False, n_process=1)
    return falkordb_store


@pytest.mark.parametrize("per_node,max_mentions,link_methods", [
    (10, 200, ["authored", "inferred"]), (1, 200, ["authored", "inferred"]), (2, 3, ["authored"]),
    (3, 1, ["inferred"]), (10, 200, [])])
def test_expansion_over_the_index_gives_the_statements_rows(both_graphs, embedder, per_node, max_mentions,
                                                            link_methods):
    store = both_graphs
    index = build_walk_index(store, "test")
    entities = [WalkIndex.id_of(index.entity_ids, i) for i in range(len(index.entity_ids))]
    chunks = [WalkIndex.id_of(index.chunk_ids, i) for i in range(len(index.chunk_ids))]
    assert len(entities) == store.counts().nodes["Entity"] and len(chunks) == store.counts().nodes["Chunk"]
    for question in QUESTIONS[:2]:
        embedding = embedder.embed_query(question)
        for frontier in ((entities, chunks), (entities[::3], []), ([], chunks[1::2]), (["entity:nowhere"], [])):
            params = {"entity_ids": frontier[0], "chunk_ids": frontier[1], "embedding": embedding,
                      "per_node": per_node, "max_mentions": max_mentions, "link_methods": link_methods}
            statement_rows = store.run("ppr_expand", params)
            index_rows = expand(index, frontier[0], frontier[1], embedding, per_node=per_node,
                                max_mentions=max_mentions, link_methods=link_methods)
            _same_rows(statement_rows, index_rows)
            if frontier == (entities, chunks) and per_node == 10 and link_methods:
                assert {row["type"] for row in index_rows} == {"MENTIONS", "DESCRIBED_BY", "RELATED", "LINKS_TO"}


def test_ppr_retrieves_the_same_with_and_without_the_index(both_graphs, embedder):
    indexes = WalkIndexes.of(both_graphs)
    assert indexes.current() is None  # nothing built yet: auto reads the store
    assert indexes.current(build=True) is not None
    for question in QUESTIONS:
        for k in (2, 5):
            over_store = strategy("ppr", both_graphs, embedder, k=k, walk_index="store").retrieve(question)
            over_index = strategy("ppr", both_graphs, embedder, k=k).retrieve(question)
            assert over_store.parameters["expanded_over"] == "store"
            assert over_index.parameters["expanded_over"] == "walk index"
            assert [item.chunk_id for item in over_index.items] == [item.chunk_id for item in over_store.items]
            assert [item.score for item in over_index.items] == pytest.approx(
                [item.score for item in over_store.items], rel=1e-2)
            assert "ppr_expand" in over_store.trace.statements and "ppr_expand" not in over_index.trace.statements
            assert over_index.trace.seeds.keys() == over_store.trace.seeds.keys()


def test_ppr_walks_the_same_masses_with_and_without_the_index(both_graphs, embedder):
    """Every node's mass to 1e-6 on every question, with a cut falling between two relations of one pair in
    opposite directions (as HotpotQA's 'organization:ny' and 'location:watertown international airport'): the
    statement kept one or the other as the store listed them, the index the same one from both ends."""
    store = both_graphs
    pair = ["person:bob stone", "person:carla moss"]  # the kg step's entities (the store lists incoming first)
    store.query("MATCH (a:Entity {id: $pair[0]}), (b:Entity {id: $pair[1]}) "
                "CREATE (a)-[:RELATED {type: 'co_occurs', weight: 5.0}]->(b), "
                "(b)-[:RELATED {type: 'co_occurs', weight: 5.0}]->(a)", {"pair": pair}, write=True)
    assert store.query("MATCH (:Entity {id: $pair[0]})-[r:RELATED {weight: 5.0}]-(:Entity {id: $pair[1]}) "
                       "RETURN count(r) AS n", {"pair": pair}) == [{"n": 2}]
    params = {"entity_ids": pair, "chunk_ids": [], "embedding": embedder.embed_query(QUESTIONS[3]), "per_node": 1,
              "max_mentions": 200, "link_methods": ["authored", "inferred"]}
    index = WalkIndexes.of(store).current(build=True)
    _same_rows(store.run("ppr_expand", params), expand(index, pair, [], params["embedding"], per_node=1,
                                                       max_mentions=200, link_methods=params["link_methods"]))
    for question in QUESTIONS:
        for per_node in (1, 10):
            walks = [strategy("ppr", store, embedder, k=5, per_node=per_node, trace_nodes=10_000,
                              walk_index=walk_index).retrieve(question) for walk_index in ("store", "auto")]
            assert [walk.parameters["expanded_over"] for walk in walks] == ["store", "walk index"]
            over_store, over_index = (walk.trace.scores for walk in walks)
            assert over_index.keys() == over_store.keys() and len(over_index) > 5
            for node, mass in over_index.items():
                assert mass == pytest.approx(over_store[node], abs=1e-6), (question, per_node, node)
            assert [item.chunk_id for item in walks[1].items] == [item.chunk_id for item in walks[0].items]


def _relation_key(row: dict) -> tuple:
    return row["entity_id"], row["other_id"], row["source_id"], row["type"]


def _same_relations_kept(index_rows: list[dict], statement_rows: list[dict]) -> None:
    """Per entity, the same relations in the same order: a cut between ties (equal names embed alike) keeps the
    same ones, ranked by the score rounded to 1e-6, then the other end's id, the start's id and the type."""
    kept: list[dict[str, list[tuple]]] = [{}, {}]
    for rows, into in zip((index_rows, statement_rows), kept, strict=True):
        for row in rows:
            into.setdefault(row["entity_id"], []).append(_relation_key(row))
    assert kept[0] == kept[1]


@pytest.mark.parametrize("per_entity,max_degree,min_score", [(10, 500, -1e9), (2, 500, -1e9), (10, 3, -1e9),
                                                               (10, 500, 0.25), (0, 500, -1e9)])
def test_kg_hops_over_the_index_give_the_statements_relations(both_graphs, embedder, per_entity, max_degree,
                                                              min_score):
    store = both_graphs
    index = build_walk_index(store, "test")
    entities = index.names("entity_ids")
    hubs = [entity for entity, count in zip(entities, index.entity_relations.tolist(), strict=True) if count > 3]
    assert hubs and len(index.related_types) >= 1  # the films' hand-built relations and the kg step's own
    for question in QUESTIONS[:3]:
        embedding = embedder.embed_query(question)
        for frontier in (entities, entities[1::4], hubs, ["entity:nowhere"]):
            params = {"entity_ids": frontier, "embedding": embedding, "weight_factor": 0.05, "max_chunks": 3,
                      "max_degree": max_degree, "min_score": min_score}
            statement_rows = store.run("kg_entity_relations", {**params, "per_entity": per_entity})
            every = {_relation_key(row): row["score"] for row in store.run("kg_entity_relations",
                                                                             {**params, "per_entity": 10_000})}
            index_rows = relation_candidates(index, frontier, embedding, per_entity=per_entity,
                                             weight_factor=0.05, max_degree=max_degree, min_score=min_score)
            _same_relations_kept(index_rows, statement_rows)
            for row in index_rows:  # each one a relation the statement scores the same
                assert row["score"] == pytest.approx(every[_relation_key(row)], abs=1e-5)
                assert row["target_id"] == (row["other_id"] if row["source_id"] == row["entity_id"]
                                            else row["entity_id"])
            if per_entity >= 10 and min_score < 0 and max_degree == 500:
                assert len(index_rows) == len(every)
            if frontier is hubs and max_degree == 3:
                assert not index_rows  # every hub skipped


def test_kg_finds_the_same_facts_with_and_without_the_index(both_graphs, embedder):
    assert WalkIndexes.of(both_graphs).current(build=True) is not None
    for question in QUESTIONS:
        over_store = strategy("kg", both_graphs, embedder, walk_index="store").retrieve(question)
        over_index = strategy("kg", both_graphs, embedder).retrieve(question)
        assert over_store.parameters["relations_over"] == "store"
        assert over_index.parameters["relations_over"] == "walk index"
        assert over_index.facts, question
        assert [fact.text() for fact in over_index.facts] == [fact.text() for fact in over_store.facts]
        assert [(f.source_id, f.target_id, f.weight, f.hop, f.chunk_ids) for f in over_index.facts] == \
            [(f.source_id, f.target_id, f.weight, f.hop, f.chunk_ids) for f in over_store.facts]
        assert [f.score for f in over_index.facts] == pytest.approx([f.score for f in over_store.facts], abs=1e-5)
        assert [item.chunk_id for item in over_index.items] == [item.chunk_id for item in over_store.items]
        assert "kg_entity_relations" in over_store.trace.statements
        assert "kg_entity_relations" not in over_index.trace.statements
        assert "kg_relation_details" in over_index.trace.statements


def test_every_write_replaces_the_stamp_and_an_older_index_is_not_used(both_graphs, embedder):
    store = both_graphs
    indexes = WalkIndexes.of(store)
    built = indexes.current(build=True)
    assert built is not None and indexes.current() is built and built.stamp == store.stamp()
    stamps = [store.stamp()]
    with store.writing() as span:  # a span: one new stamp before its first write ...
        store.run("meta_stamp_get", {"id": "meta"})
        assert store.stamp() == stamps[-1]  # reads leave it
        store.query("MATCH (c:Chunk {id: 'red:0'}) SET c.note = 'x'", write=True)
        stamps.append(store.stamp())
        assert indexes.current() is None  # changed: the index built before stops matching at once
        store.query("MATCH (c:Chunk {id: 'red:0'}) SET c.note = 'y'", write=True)
        assert store.stamp() == stamps[-1]
    stamps.append(store.stamp())  # ... and one after its last
    assert (span.before, span.first, span.after, span.alone) == (stamps[0], stamps[1], stamps[2], True)
    with store.unit() as unit:
        unit.run("meta_stamp_get", {"id": "meta"})
    stamps.append(store.stamp())
    store.write_batches("set_entity_embeddings", [{"id": "nowhere", "embedding": [0.1] * 384}] * 3, batch_size=1)
    stamps.append(store.stamp())
    assert len(set(stamps)) == len(stamps), stamps
    assert indexes.current() is None
    rebuilt = indexes.current(build=True)
    assert rebuilt is not None and rebuilt.stamp == stamps[-1]


def test_a_saved_index_loads_memory_mapped_only_at_its_stamp(both_graphs, tmp_path):
    root = tmp_path / "walk-index"
    index = build_walk_index(both_graphs, "s1")
    index.save(root)
    manifest = json.loads((root / "s1" / "manifest.json").read_text())
    assert manifest["stamp"] == "s1" and manifest["chunks"] == len(index.chunk_ids)
    assert WalkIndex.load(root, "s2") is None and WalkIndex.saved_under(root)
    loaded = WalkIndex.load(root, "s1")
    assert loaded is not None and isinstance(loaded.entity_vectors.stored.base, np.memmap)
    for name in ("chunk_ids", "entity_ids", "mention_idx", "related_weight", "link_vectors", "entity_mentions"):
        assert np.array_equal(getattr(loaded, name), getattr(index, name), equal_nan=name == "entity_mentions")
    index.stamp = "s2"
    index.save(root)  # the newer one replaces it: nothing of the older one is left
    assert WalkIndex.load(root, "s1") is None and WalkIndex.load(root, "s2") is not None
    assert sorted(p.name for p in root.iterdir()) == ["s2", "vectors"]
    (root / "s2" / "manifest.json").write_text("{not json")
    assert WalkIndex.load(root, "s2") is None
    index.stamp = "../elsewhere"  # a hand-edited stamp never names a path
    with pytest.raises(OSError):
        index.save(root)
    assert WalkIndex.load(root, "../elsewhere") is None and not (tmp_path / "elsewhere").exists()


def test_an_id_longer_than_every_indexed_one_is_not_cut_to_match():
    ids = np.array([b"ab", b"abc"])
    assert WalkIndex.numbers(ids, ["abcd", "abc", "a", "zz", "ab"]) == [1, 0]


def test_enrich_kg_keeps_the_walk_index_current_and_other_writes_leave_it_behind(kb, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(record) + "\n" for record in COMMUNITY_CORPUS[:3]))
    kb.ingest(corpus)
    assert kb.walk_index() == {"current": False, "saved": False, "directory": kb.walk_index()["directory"],
                               "stamp": kb.store.stamp()}  # nothing builds it before enrich kg
    kb.enrich("kg", n_process=1)
    state = kb.walk_index()
    assert state["current"] and state["chunks"] == 3 and state["entities"] == kb.store.counts().nodes["Entity"]
    question = "Who founded the Python Software Foundation?"
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps(record) + "\n" for record in COMMUNITY_CORPUS[3:]))
    reads = kb.store.statement_counts["walk_index_chunks"]
    kb.ingest(more)  # a write other than enrich kg does not rebuild it (seconds on a large graph) ...
    assert kb.store.statement_counts["walk_index_chunks"] == reads
    assert kb.walk_index()["saved"] and not kb.walk_index()["current"]
    # ... and the walk reads the store, which it does the same as the index (test_ppr_retrieves_the_same...)
    assert kb.retrieve(question, strategy="ppr", k=3).parameters["expanded_over"] == "store"
    kb.enrich("kg", n_process=1)  # enriches the new documents and updates the index after itself ...
    assert kb.walk_index()["current"] and kb.walk_index()["chunks"] == 5
    index, held = WalkIndexes.of(kb.store).current(), kg_changes.read_log(kb.store)
    assert kb.store.statement_counts["walk_index_mentions_of"] >= 1  # ... from the log of change
    assert index.log == held.token and index.position == held.end and held.entity_ids == ()  # both read it all
    _same_index(index, build_walk_index(kb.store, "fresh"))
    stamp = kb.store.stamp()  # recording the index's position is bookkeeping: the stamp stays, so a run with
    assert kb.enrich("kg", n_process=1).finish_skipped  # nothing to do skips its phases ...
    assert kb.store.stamp() == stamp and kb.walk_index()["current"]  # ... and the index stays current
    kb.delete("k1")
    assert not kb.walk_index()["current"]
    assert kb.walk_index(rebuild=True)["chunks"] == 4  # `neoweave walk-index`
    _same_index(WalkIndexes.of(kb.store).current(), build_walk_index(kb.store, "fresh"))
    result = kb.retrieve(question, strategy="ppr", k=3)
    assert result.parameters["expanded_over"] == "walk index" and result.items


def test_a_long_lived_reader_rebuilds_an_index_behind_the_graph_in_the_background(kb, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(record) + "\n" for record in COMMUNITY_CORPUS))
    kb.ingest(corpus)
    kb.enrich("kg", n_process=1)
    kb.delete("k1")
    indexes = WalkIndexes.of(kb.store)
    with indexes._lock:  # while a build holds the index, a reader does not wait for it: it reads the store
        assert indexes.current() is None
    assert kb.walk_index(background=True)["current"] is False  # behind: a build starts in a thread ...
    assert indexes.join(timeout=120)
    state = kb.walk_index()  # ... and the next reader finds it current
    assert state["current"] and state["chunks"] == len(COMMUNITY_CORPUS) - 1
    _same_index(indexes.current(), build_walk_index(kb.store, "fresh"))
    assert kb.retrieve("Who founded the Python Software Foundation?", strategy="ppr",
                       k=3).parameters["expanded_over"] == "walk index"


def _same_index(a: WalkIndex, b: WalkIndex) -> None:
    for name in WalkIndex.arrays():
        x, y = getattr(a, name), getattr(b, name)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name


def test_a_step_that_writes_nothing_the_index_reads_keeps_it_instead_of_rebuilding(kb, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(record) + "\n" for record in COMMUNITY_CORPUS))
    kb.ingest(corpus)
    kb.enrich("kg", n_process=1)
    directory = WalkIndexes.of(kb.store).directory
    for step in ("communities", "tags", "rst"):
        stamp, reads = kb.store.stamp(), kb.store.statement_counts["walk_index_chunks"]
        kb.enrich(step)
        assert kb.store.stamp() != stamp  # the step wrote ...
        assert kb.store.statement_counts["walk_index_chunks"] == reads, step  # ... and the index was not rebuilt
        assert kb.walk_index()["current"]
        assert sorted(path.name for path in directory.iterdir()) == [kb.store.stamp(), "vectors"]  # moved
        kept = WalkIndex.load(directory, kb.store.stamp())
        assert kept is not None
        _same_index(kept, build_walk_index(kb.store, "fresh"))  # what a rebuild would give
    # a span another writer's span overlapped is not taken for this one's own: the index is not carried over
    other = type(kb.store)(server=kb.store.server, graph=kb.store.graph_name)
    before = kb.store.stamp()
    with kb._writing("a test", writes=frozenset({"Tag"})):
        kb.store.query("MERGE (t:Tag {name: 'first'})", write=True)
        other.query("MATCH (e:Entity) WITH e ORDER BY e.id LIMIT 1 SET e.mention_count = 999", write=True)
    other.close()
    assert not kb.walk_index()["current"] and sorted(path.name for path in directory.iterdir()) == [before, "vectors"]
    kb.walk_index(rebuild=True)
    _same_index(WalkIndex.load(directory, kb.store.stamp()), build_walk_index(kb.store, "fresh"))


def test_a_link_without_its_context_embedding_is_skipped_with_or_without_the_index(falkordb_store, embedder):
    _load(falkordb_store, embedder, FILMS, FILM_ENTITIES, FILM_LINKS)
    question = "Where was the director of Red Harbor born?"
    walked = strategy("ppr", falkordb_store, embedder, walk_index="store").retrieve(question)
    assert ("red", "LINKS_TO", "carla") in walked.trace.relationships and not walked.trace.notes
    falkordb_store.query("MATCH (:Section {id: 'red'})-[l:LINKS_TO]->(:Section {id: 'carla'}) "
                         "SET l.context_embedding = null", write=True)
    embedding = embedder.embed_query(question)
    params = {"entity_ids": [], "chunk_ids": ["red:0"], "embedding": embedding, "per_node": 5, "max_mentions": 1000,
              "link_methods": ["authored", "inferred"]}
    rows = falkordb_store.run("ppr_expand", params)
    index = build_walk_index(falkordb_store, "test")
    _same_rows(rows, expand(index, [], ["red:0"], embedding, per_node=5, max_mentions=1000,
                            link_methods=["authored", "inferred"]))
    assert not [row for row in rows if row["type"] == "LINKS_TO" and row["via_end"] == "carla"]
    for walk_index in ("store", "build"):
        result = strategy("ppr", falkordb_store, embedder, walk_index=walk_index).retrieve(question)
        assert result.items and result.trace.skipped_links == [("red", "carla")], walk_index
        assert ("red", "LINKS_TO", "carla") not in result.trace.relationships
        assert result.trace.notes == [
            "ppr: skipped 1 link(s) without a context embedding (e.g. red -> carla); run `neoweave ingest PATH` or "
            "`neoweave sync PATH` again (unchanged documents are skipped, every missing link context is embedded), "
            "or `neoweave enrich kg`"]


def _change_chunk_and_link_vectors(store, new_vector: list[float]) -> None:
    """Give chunk red:0 and the link red -> carla another vector (FalkorDB ignores a vector SET over a vector:
    cleared first, as the enrich steps do)."""
    store.query("MATCH (c:Chunk {id: 'red:0'}) SET c.embedding = null", write=True)
    store.query("MATCH (c:Chunk {id: 'red:0'}) SET c.embedding = vecf32($v)", {"v": new_vector}, write=True)
    store.query("MATCH (:Section {id: 'red'})-[l:LINKS_TO]->(:Section {id: 'carla'}) "
                "SET l.context_embedding = null", write=True)
    store.query("MATCH (:Section {id: 'red'})-[l:LINKS_TO]->(:Section {id: 'carla'}) "
                "SET l.context_embedding = vecf32($v)", {"v": new_vector}, write=True)


def test_a_rebuild_reads_only_the_vectors_that_changed_and_equals_a_fresh_build(both_graphs, embedder):
    store = both_graphs
    before = build_walk_index(store, "s1")
    new_vector = embedder.embed(["a chunk about something else entirely"])[0]
    _change_chunk_and_link_vectors(store, new_vector)
    counts = dict(store.statement_counts)
    rebuilt = build_walk_index(store, "s2", previous=before)
    read = {name: store.statement_counts[name] - counts.get(name, 0)
            for name in ("walk_index_chunk_vectors", "walk_index_entity_vectors", "walk_index_link_vectors")}
    assert read == {"walk_index_chunk_vectors": 1, "walk_index_entity_vectors": 0, "walk_index_link_vectors": 1}
    fresh = build_walk_index(store, "s2")
    for name in WalkIndex.arrays():
        ours, theirs = getattr(rebuilt, name), getattr(fresh, name)
        assert np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f"), name
    changed = WalkIndex.numbers(fresh.chunk_ids, ["red:0"])[0]
    assert not np.array_equal(before.chunk_vectors[changed], fresh.chunk_vectors[changed])


def _vector_files(root: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in (root / "vectors").glob("*.f32")}


def test_saving_an_update_appends_only_the_vectors_it_read(both_graphs, embedder, tmp_path):
    """The vectors an update takes from the previous index stay where they were written: saving it appends the
    rows it read (one chunk, one link context) to the same files, and a process still reading the older index
    sees its vectors unchanged."""
    store, root = both_graphs, tmp_path / "walk-index"
    first = build_walk_index(store, "s1")
    first.save(root)
    files = _vector_files(root)
    assert sorted(name.split("-")[0] for name in files) == ["chunk_vectors", "entity_vectors", "link_vectors"]
    older = WalkIndex.load(root, "s1")
    assert older is not None
    older_chunks, older_links = np.asarray(older.chunk_vectors), np.asarray(older.link_vectors)
    new_vector = embedder.embed(["a chunk about something else entirely"])[0]
    _change_chunk_and_link_vectors(store, new_vector)
    updated = build_walk_index(store, "s2", previous=older)
    updated.save(root)
    row = 384 * 4
    grown = {name: size - files[name] for name, size in _vector_files(root).items()}
    assert grown == {name: row if name.startswith(("chunk", "link")) else 0 for name in files}
    loaded = WalkIndex.load(root, "s2")
    fresh = build_walk_index(store, "s2")
    for index in (updated, loaded):
        for name in WalkIndex.arrays():
            if name.endswith("_vectors"):
                assert np.array_equal(np.asarray(getattr(index, name)), np.asarray(getattr(fresh, name))), name
    assert np.array_equal(np.asarray(older.chunk_vectors), older_chunks)
    assert np.array_equal(np.asarray(older.link_vectors), older_links)


def test_a_file_mostly_of_unused_rows_is_written_again_with_the_rows_in_use(both_graphs, embedder, tmp_path,
                                                                           monkeypatch):
    """When the rows no index uses outnumber those in use, a save writes the rows in use to a new file; the
    old one goes once no saved index names it."""
    from neoweave.query import walk_storage

    monkeypatch.setattr(walk_storage, "COMPACT_MIN_ROWS", 0)
    monkeypatch.setattr(walk_storage, "KEEP_UNNAMED_SECONDS", 0.0)
    store, root = both_graphs, tmp_path / "walk-index"
    index = build_walk_index(store, "s0")
    index.save(root)
    chunks = len(index.chunk_ids)
    first = {name for name in _vector_files(root) if name.startswith("chunk")}
    for step in range(1, 4):  # every chunk vector changed: each update reads them all again
        vectors = embedder.embed([f"version {step} of chunk {i}" for i in range(chunks)])
        rows = [{"id": WalkIndex.id_of(index.chunk_ids, i), "v": vector} for i, vector in enumerate(vectors)]
        store.query("MATCH (c:Chunk) SET c.embedding = null", write=True)
        store.query("UNWIND $rows AS row MATCH (c:Chunk {id: row.id}) SET c.embedding = vecf32(row.v)",
                    {"rows": rows}, write=True)
        index = build_walk_index(store, f"s{step}", previous=index)
        index.save(root)
        loaded = WalkIndex.load(root, f"s{step}")
        assert loaded is not None and np.array_equal(np.asarray(loaded.chunk_vectors),
                                                     np.asarray(build_walk_index(store, "x").chunk_vectors))
    now = {name: size for name, size in _vector_files(root).items() if name.startswith("chunk")}
    assert not first & set(now), "the first file, mostly unused rows, is gone"
    assert all(size <= 2 * chunks * 384 * 4 for size in now.values())


def test_arrays_mostly_padding_are_saved_compressed_and_load_the_same(tmp_path):
    from neoweave.query.walk_storage import load_array, save_array

    ids = np.array(sorted(f"entity:{i}".encode() + (b"x" * 120 if i == 7 else b"") for i in range(20_000)))
    counts = np.ones(20_000, dtype=np.float64)
    noise = np.random.default_rng(1).random(20_000)
    for name, array in (("ids", ids), ("counts", counts), ("noise", noise), ("small", ids[:10])):
        save_array(tmp_path, name, array)
        assert np.array_equal(load_array(tmp_path, name), array) and load_array(tmp_path, name).dtype == array.dtype
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "counts.npy.z", "ids.npy.z", "noise.npy", "small.npy"]
    assert (tmp_path / "ids.npy.z").stat().st_size * 10 < ids.nbytes


def test_processes_saving_into_one_directory_never_lose_the_rows_they_map(tmp_path, monkeypatch):
    """Saves that start new files while others remove the files no index names (at once, no grace time): each
    save maps its rows before they can be removed, so the rows it returns read back what it saved."""
    import threading

    from neoweave.query import walk_storage
    from neoweave.query.walk_storage import VectorRows, remove_unnamed

    monkeypatch.setattr(walk_storage, "KEEP_UNNAMED_SECONDS", -1.0)
    failures: list[str] = []

    def saver(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(40):
            matrix = rng.random((50, 8), dtype=np.float32)
            try:
                saved, entry = VectorRows.of_matrix(matrix, np.ones(50, dtype=bool)).save(tmp_path, "chunk_vectors")
                remove_unnamed(tmp_path, {entry["file"]})
                if not np.array_equal(np.asarray(saved), matrix):
                    failures.append("rows differ")
            except OSError as exc:
                failures.append(repr(exc))

    threads = [threading.Thread(target=saver, args=(seed,)) for seed in (1, 2, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
