"""The kg step's record of change: graph-wide phases that read only the entities changed since they last
completed leave the graph a run reading every entity leaves (real store, embedder and spaCy)."""

from __future__ import annotations

import contextlib
import json
import uuid
from pathlib import Path

import pytest

from neoweave.audit.snapshot import diff, snapshot
from neoweave.enrich import kg_changes, resolution_state, run
from neoweave.enrich.kg_changes import CAP, ChangeRecord, read_log
from neoweave.enrich.resolution import unmerge
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions, delete_documents
from neoweave.kb.rebuild_check import sample_records
from neoweave.store.falkordb_store import FalkorDBStore

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def records():
    """Gold pages of HotpotQA questions (pages that name each other: homes, title mentions, merges)."""
    return sample_records(ROOT / "examples/hotpotqa/corpus.jsonl", ROOT / "examples/hotpotqa/qa.jsonl", questions=12)


@pytest.fixture
def two_graphs(falkordb_server):
    stores = [FalkorDBStore(server=falkordb_server, graph=f"changes_{side}_{uuid.uuid4().hex[:8]}")
              for side in ("scoped", "everything")]
    yield stores
    for store in stores:
        with contextlib.suppress(Exception):
            store._graph_handle().delete()
        store.close()


def _ingest(store, embedder, path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(path)


def _record(store) -> dict:
    rows = store.run("kg_changes_get")
    return rows[0] if rows else {}


def test_scoped_phases_leave_the_graph_a_run_reading_every_entity_leaves(two_graphs, embedder, records, tmp_path):
    """The same history on two graphs, one enriched with the record (default), one with `scoped=false`: new
    documents (title mentions of old titles in new text and of new titles in old text), a rewritten document, a
    deleted one (inferred links into it go), merges, a page titled after an entity that does not name it (the
    entity gains a home, then loses it with the page, though none of its mentions changed), and an unmerge. After
    every `enrich kg` the graphs are equal, and the scoped runs read a fraction of the entities."""
    scoped, everything = two_graphs
    first, later = records[:16], records[16:]
    changed = dict(first[3], text=first[3]["text"].rsplit(".", 2)[0] + ". " + later[0]["title"] + " is named here.")

    def homeless_person() -> str:
        rows = scoped.query("MATCH (e:Entity) WHERE e.id STARTS WITH 'person:' AND e.name CONTAINS ' ' "
                            "AND NOT (e)-[:DESCRIBED_BY]->() RETURN e.name AS name ORDER BY e.id LIMIT 1")
        assert rows, "the sample has a person without a home"
        return rows[0]["name"]

    history = [("ingest", lambda: first), ("ingest", lambda: later[:6]), ("ingest", lambda: [changed]),
               ("delete", lambda: first[5]["id"]), ("ingest", lambda: later[6:]),
               ("ingest", lambda: [{"id": "page-about", "title": homeless_person(),
                                    "text": "This page has a title and a sentence without names."}]),
               ("delete", lambda: "page-about")]
    in_scope = []
    for number, (operation, argument) in enumerate(history):
        value = argument()
        for store in (scoped, everything):
            if operation == "ingest":
                _ingest(store, embedder, tmp_path / f"step{number}.jsonl", value)
            else:
                assert delete_documents(store, value) == [value]
        done = run("kg", scoped, embedder=embedder, progress=False)
        run("kg", everything, embedder=embedder, progress=False, scoped=False)
        counters = done.counters
        in_scope.append((counters["finish_scoped"], counters.get("entities_in_scope"), counters["entities"],
                         counters.get("homes_added", 0), counters.get("homes_removed", 0)))
        differences = diff(snapshot(everything), snapshot(scoped))
        assert differences == [], f"after {operation} {number}: {differences[:10]}"
        assert counters["resolution_read_scoped"] == (1 if number else 0), counters
        _assert_saved_state_is_current(scoped)
    # an unmerge (as `neoweave entities unmerge` runs it: restore, then re-extract the absorbed entity's chunks)
    merges = [m for m in scoped.run("entity_merges", {"ids": []}) if m["status"] == "merged"]
    assert merges, "the sample merges entities"
    for store in (scoped, everything):
        undone = unmerge(store, merges[0]["id"])
        run("kg", store, embedder=embedder, progress=False, chunk_ids=undone["chunk_ids"], scoped=store is scoped)
    differences = diff(snapshot(everything), snapshot(scoped))
    assert differences == [], f"after the unmerge: {differences[:10]}"
    _assert_saved_state_is_current(scoped)
    assert in_scope[0][:2] == (0, None)  # the first run has no record: it reads every entity
    assert all(flag == 1 and 0 < size < total / 2 for flag, size, total, _, _ in in_scope[1:]), in_scope
    assert in_scope[-2][3] >= 1, in_scope  # the page gave a home (its deletion took the edge; the graphs agree)
    # the record's fingerprint leaves `scoped` out: after a run reading everything, the next default run is scoped
    assert _record(scoped)["fingerprint"] and _record(everything)["fingerprint"] == _record(scoped)["fingerprint"]


def _assert_saved_state_is_current(store) -> None:
    """Resolution's state from the rows a run saved (and those logged since) is the state every row gives."""
    in_memory = resolution_state.read_state(store)
    store.derived.clear()  # as a new process finds them: in the file
    from_file = resolution_state.read_state(store)
    resolution_state.forget_saved(store)
    whole = resolution_state.read_state(store)
    assert (in_memory.read_again, from_file.read_again, whole.read_again) == (0, 0, None)
    for kept in (in_memory, from_file):  # nothing was logged after the run's last entity writes
        assert (kept.atoms, kept.entities, kept.records, kept.undone, kept.documents) == (
            whole.atoms, whole.entities, whole.records, whole.undone, whole.documents)


def test_the_record_lists_what_writes_change_and_a_completed_run_consumes_only_what_it_read(
        falkordb_store, embedder, records, tmp_path):
    store = falkordb_store
    _ingest(store, embedder, tmp_path / "a.jsonl", records[:4])
    assert not _record(store)  # no record before the phases first complete: nothing is listed
    first = run("kg", store, embedder=embedder, progress=False)
    held = read_log(store)
    assert held.fingerprint and held.finished and held.token and held.since(held.token, held.consumed) is not None
    # a run reading every entity leaves nothing for the next: its own merges were read by its later phases (the
    # first write after a build read everything again before)
    assert first.counters.get("merges", 0) > 0 and held.since(held.token, held.consumed) == []
    # a deletion lists the entities the document mentioned (read before they go)
    mentioned = {row["id"] for row in store.query(
        "MATCH (:Document {id: $id})-[:HAS_SECTION]->()-[:HAS_CHUNK]->()-[:MENTIONS]->(e) RETURN e.id AS id",
        {"id": records[0]["id"]})}
    delete_documents(store, records[0]["id"])
    pending = read_log(store).since(held.token, held.consumed)
    assert mentioned and mentioned <= set(pending)
    # a run reads the log after its position; a write while it runs (after its read) stays for the next run;
    # the entries it read stay while the walk index has not read them, and go once it has
    kg_changes.walk_read(store, held.token, held.consumed)  # an index built before the deletion
    record = ChangeRecord(store, held.fingerprint)
    assert record.scoped and record.refresh().entity_ids == frozenset(pending)
    store.run("kg_changes_mark_entities", {"entity_ids": ["person:written meanwhile"]}, write=True)
    record.close()
    after = read_log(store)
    assert after.since(after.token, after.consumed) == ["person:written meanwhile"]
    assert after.since(held.token, held.consumed) == [*pending, "person:written meanwhile"]  # kept for the index
    kg_changes.walk_read(store, after.token, after.end)  # the index read everything: what kg read too goes
    trimmed = read_log(store)
    assert trimmed.entity_ids == ("person:written meanwhile",) and trimmed.since(held.token, held.consumed) is None
    assert not set(pending) & set(trimmed.entity_ids)  # the deleted document's entities are not kept
    record = ChangeRecord(store, held.fingerprint)  # without an index reading the log, a run drops what it read
    record.refresh()
    record.close()
    assert read_log(store).entity_ids == ()
    # another fingerprint (other parameters, code, model) reads everything and never uses the log half way; the
    # log starts afresh, so every reader of the old one reads everything too
    other = ChangeRecord(store, "another")
    assert not other.scoped and read_log(store).fingerprint is None
    assert other.refresh().everything
    fresh = read_log(store)
    assert fresh.entity_ids == () and fresh.token != held.token and fresh.since(held.token, held.consumed) is None
    other.close()
    assert read_log(store).fingerprint == "another"


def test_past_its_window_a_reader_reads_everything(falkordb_store, embedder, records, tmp_path):
    store = falkordb_store
    _ingest(store, embedder, tmp_path / "a.jsonl", records[:2])
    run("kg", store, embedder=embedder, progress=False)
    start = read_log(store)
    behind = len(start.since(start.token, start.consumed))  # entries of the run's own merges may be left
    store.run("kg_changes_mark_entities", {"entity_ids": [f"concept:x{i}" for i in range(CAP - behind)]},
              write=True)
    held = read_log(store)
    assert len(held.entity_ids) == CAP and len(held.since(held.token, held.consumed)) == CAP
    store.run("kg_changes_mark_entities", {"entity_ids": ["concept:one more"]}, write=True)
    held = read_log(store)
    assert len(held.entity_ids) == CAP and held.entity_ids[-1] == "concept:one more"
    assert held.base == start.base + len(start.entity_ids) + CAP - behind + 1 - CAP
    assert held.since(held.token, held.consumed) is None  # the kg step's position left the window
    report = run("kg", store, embedder=embedder, progress=False)
    assert report.counters["finish_scoped"] == 0 and "entities_in_scope" not in report.counters
    held = read_log(store)
    assert held.fingerprint and held.since(held.token, held.consumed) is not None


def test_a_users_cypher_write_makes_the_next_run_read_every_entity(kb, records, tmp_path):
    kb.ingest(records[:2])
    kb.enrich("kg")
    assert _record(kb.store)["fingerprint"]
    kb.cypher("MATCH (e:Entity) WITH e LIMIT 1 SET e.mention_count = -1", write=True)
    assert not _record(kb.store)
    report = kb.enrich("kg")
    assert report.counters["finish_scoped"] == 0
    assert not kb.cypher("MATCH (e:Entity) WHERE e.mention_count < 0 RETURN e.id AS id")
    kg_changes.forget(kb.store)  # idempotent


class WithoutLocalDirectory(FalkorDBStore):
    """The store as it is on a server it does not run (a remote FalkorDB, Neo4j): no directory to keep files in."""

    def derived_directory(self, name: str) -> Path | None:
        return None


def test_a_store_without_a_local_directory_keeps_the_title_digests_in_the_graph(falkordb_server, embedder, records,
                                                                                 tmp_path):
    """The title scan and the homes phase of a scoped run read only what titles changed since the last run: the
    digests they compare with are kept on the record's Meta node (they were a file beside the store's, so a remote
    store read every title mention on every run), and the graph is the one a run reading everything leaves."""
    remote = WithoutLocalDirectory(server=falkordb_server, graph=f"changes_remote_{uuid.uuid4().hex[:8]}")
    everything = FalkorDBStore(server=falkordb_server, graph=f"changes_all_{uuid.uuid4().hex[:8]}")
    try:
        history = [records[:8], records[8:12], [dict(records[2], title=records[2]["title"] + " (retitled)")]]
        for number, batch in enumerate(history):
            for store in (remote, everything):
                _ingest(store, embedder, tmp_path / f"step{number}.jsonl", batch)
            done = run("kg", remote, embedder=embedder, progress=False)
            run("kg", everything, embedder=embedder, progress=False, scoped=False)
            digests = kg_changes.load_title_digests(remote, _record(remote)["finished"])
            assert digests and all(isinstance(value, str) for value in digests.values())
            assert done.counters["finish_scoped"] == (1 if number else 0)
            differences = diff(snapshot(everything), snapshot(remote))
            assert differences == [], f"after step {number}: {differences[:10]}"
    finally:
        for store in (remote, everything):
            with contextlib.suppress(Exception):
                store._graph_handle().delete()
            store.close()
