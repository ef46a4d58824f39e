"""Entity resolution's rules at their edges: numbered names, and rules that apply through another rule's pair."""

from __future__ import annotations

import numpy as np

from neoweave.enrich.base import EnrichReport, StepContext
from neoweave.enrich.resolution import Candidate, propose
from neoweave.enrich.resolution_derived import resolve


def test_names_that_differ_in_any_number_are_not_merged_by_embedding(embedder):
    """MiniLM puts "Python 3.3" and "Python 3.2.3" above the default threshold (0.93); a version is identity, as
    "HD 23" in "Heinkel HD 23" is (the Python docs graph had merged Python 1.3 into Python 3.3). At 0.9 the names
    without a number still merge."""
    names = ["Python 3.3", "Python 3.2.3", "Python 1.3", "Python 3.9", "Python 3.9.0", "Heinkel HD 23",
             "Heinkel HD 26", "Python Software Foundation", "The Python Software Foundation"]
    vectors = dict(zip(names, np.asarray(embedder.embed(names), dtype=np.float32), strict=True))
    candidates = [Candidate(f"organization:{name.lower()}", name.lower(), name, "organization", [], 1)
                  for name in names]
    embeddings = {c.id: vectors[c.name] for c in candidates}
    numbered = [(a, b) for a, b in (("Python 3.3", "Python 3.2.3"), ("Python 3.3", "Python 1.3"),
                                    ("Python 3.9", "Python 3.9.0"), ("Heinkel HD 23", "Heinkel HD 26"))]
    assert any(float(vectors[a] @ vectors[b]) >= 0.93 for a, b in numbered)  # the threshold alone would merge
    proposals = propose(candidates, embeddings=embeddings, embedding_threshold=0.9)
    merged = {frozenset((p.survivor, p.absorbed)) for p in proposals}
    assert merged == {frozenset(("organization:python software foundation",
                                 "organization:the python software foundation"))}, proposals


def _entity(store, chunk: str, entity_id: str, name: str, mentions: int) -> None:
    """An entity mentioned by one chunk (of the document named by the chunk id's first letters)."""
    store.query("MERGE (c:Chunk {id: $chunk, doc_id: $doc}) "
                "CREATE (e:Entity {id: $id, key: $key, name: $name, aliases: [], mention_count: $n}) "
                "CREATE (c)-[:MENTIONS {origin_ids: [$id], names: [$name], types: [''], counts: [$n], "
                "contexts: [$name], methods: ['fast'], sources: ['test'], count: $n, name: $name, "
                "origin_id: $id, method: 'fast', source: 'test', created_at: 't'}]->(e)",
                {"chunk": chunk, "doc": chunk.split("#")[0], "id": entity_id, "key": entity_id.split(":", 1)[1],
                 "name": name, "n": mentions},
                write=True)


def test_a_run_merges_what_its_own_merges_make_mergeable(falkordb_store):
    """"IBM" is the initials of two entities of one name (an organization and a work), which same-name merges: the
    initials of one name, so the acronym rule applies. One run does both, so a second run finds nothing."""
    store = falkordb_store
    _entity(store, "c1", "organization:international business machines", "International Business Machines", 5)
    _entity(store, "c2", "work:international business machines", "International Business Machines", 1)
    _entity(store, "c3", "organization:ibm", "IBM", 2)
    report = EnrichReport("kg", "fast", "test")
    merges = resolve(StepContext(store), report)
    assert sorted((m.rule, m.absorbed, m.survivor) for m in merges) == [
        ("acronym", "organization:ibm", "organization:international business machines"),
        ("same-name", "work:international business machines", "organization:international business machines")]
    assert store.query("MATCH (e:Entity) RETURN e.id AS id, e.aliases AS aliases") == [
        {"id": "organization:international business machines", "aliases": ["IBM"]}]
    assert resolve(StepContext(store), EnrichReport("kg", "fast", "test")) == []


def test_a_person_who_absorbed_another_entity_is_compared_where_that_one_was_mentioned(falkordb_store):
    """"Puneet Sira" tagged a person in one document and a name in another, where the lone "Sira" is: a full name's
    documents are those of every entity of that name, so "Sira" shares one with exactly one full name."""
    store = falkordb_store
    _entity(store, "d1#0", "person:puneet sira", "Puneet Sira", 3)
    _entity(store, "d2#0", "name:puneet sira", "Puneet Sira", 1)
    _entity(store, "d2#1", "person:sira", "Sira", 1)
    merges = resolve(StepContext(store), EnrichReport("kg", "fast", "test"))
    assert sorted((m.rule, m.absorbed) for m in merges) == [("partial-name", "person:sira"),
                                                             ("same-name", "name:puneet sira")]
    assert resolve(StepContext(store), EnrichReport("kg", "fast", "test")) == []


def _state(atoms, undone=(), documents=None):
    from neoweave.enrich.resolution_state import Atom, State

    made = {a[0]: Atom(a[0], a[0].split(":", 1)[1], a[1], a[0].split(":", 1)[0], "person", "fast", a[2], {a[0]})
            for a in atoms}
    return State(made, set(made), {}, {frozenset(pair) for pair in undone}, documents or {})


def test_the_full_name_survives_its_short_forms_however_often_they_are_mentioned():
    """A last name, an acronym or a titled form more mentioned than the full name still becomes its alias: the
    entity is "Stephen King", not "King" (also where a title mention tagged "King" as a name)."""
    from neoweave.enrich.resolution_derived import derive

    atoms = [("person:king", "King", 2), ("name:king", "King", 9), ("person:stephen king", "Stephen King", 1),
             ("person:king lothair ii", "King Lothair II", 7), ("person:lothair ii", "Lothair II", 3)]
    documents = {atom[0]: {"doc:1"} for atom in atoms}
    clusters = derive(_state(atoms, documents=documents), embed=None, stored_embeddings=lambda ids: {},
                      changed=None, threshold=0.93, unembedded_types=())
    assert clusters.survivor["person:king"] == clusters.survivor["name:king"] == "person:stephen king"
    assert clusters.survivor["person:king lothair ii"] == "person:lothair ii"
    assert {(r["absorbed_id"], r["rule"]) for r in clusters.records.values()} == {
        ("person:king", "partial-name"), ("name:king", "same-name"), ("person:king lothair ii", "honorific")}


def test_clusters_and_survivors_do_not_depend_on_the_order_atoms_are_read_in():
    """The survivor is the most mentioned form of the cluster, then the shortest key, then the smallest id, and
    the records are the same whatever order the forms and pairs come in; a pair a user undid never joins."""
    from neoweave.enrich.resolution_derived import derive

    atoms = [("person:lothair ii", "Lothair II", 2), ("person:king lothair ii", "King Lothair II", 2),
             ("name:lothair ii", "Lothair II", 1), ("person:derrickson", "Derrickson", 1)]
    results = []
    for ordered in (atoms, atoms[::-1]):
        clusters = derive(_state(ordered), embed=None, stored_embeddings=lambda ids: {}, changed=None,
                          threshold=0.93, unembedded_types=())
        results.append((clusters.survivor, clusters.records))
    assert results[0] == results[1]
    survivor, records = results[0]
    assert survivor["person:king lothair ii"] == survivor["name:lothair ii"] == "person:lothair ii"
    assert {(r["absorbed_id"], r["rule"], r["via"]) for r in records.values()} == {
        ("person:king lothair ii", "honorific", "person:lothair ii"),
        ("name:lothair ii", "same-name", "person:lothair ii")}
    more = [(i, n, 5 if i == "name:lothair ii" else m) for i, n, m in atoms]  # another form now most mentioned
    swapped = derive(_state(more), embed=None, stored_embeddings=lambda ids: {}, changed=None, threshold=0.93,
                     unembedded_types=())
    assert swapped.survivor["person:lothair ii"] == "name:lothair ii"
    undone = derive(_state(atoms, undone=[("person:lothair ii", "person:king lothair ii")]), embed=None,
                    stored_embeddings=lambda ids: {}, changed=None, threshold=0.93, unembedded_types=())
    assert undone.survivor.get("person:king lothair ii", "person:king lothair ii") == "person:king lothair ii"
