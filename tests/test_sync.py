"""`sync`: a folder or JSONL file mirrored into the graph, against the real embedded store and embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import COMMUNITY_CORPUS

from neoweave.cypher.registry import explore_query
from neoweave.errors import NeoweaveError
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

PAGES = {
    "guide.md": "# Event loops\n\nThe event loop in asyncio runs coroutines and callbacks. Tasks wrap coroutines "
                "so they run concurrently.\n\n## Cancelling\n\nA task is cancelled with Task.cancel().\n",
    "memory.html": "<html><head><title>Memory</title></head><body><h1 id='memory'>Memory</h1><p>CPython frees "
                   "objects by reference counting. A cyclic garbage collector finds reference cycles.</p>"
                   "<h2 id='arenas'>Arenas</h2><p>Small objects live in arenas of pymalloc.</p></body></html>",
    "history.txt": "Gustave Eiffel built the Eiffel Tower in Paris for the Exposition Universelle of 1889. "
                   "Maurice Koechlin and Emile Nouguier designed the tower for the company of Gustave Eiffel.\n",
    "notes/tips.md": "# Tips\n\nProfile first with cProfile, then optimise the hot loop.\n",
}
RECORDS = [
    {"id": "r1", "title": "Lothair II", "text": "Lothair II was king of Lotharingia and married Teutberga."},
    {"id": "r2", "title": "Waldrada", "text": "Waldrada was the mistress of Lothair II in Aachen."},
    {"id": "r3", "title": "Teutberga", "text": "Teutberga was queen of Lotharingia."},
    {"id": "r4", "title": "Hugh", "text": "Hugh was the son of Waldrada and Lothair II."},
]


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _documents(store, under: Path | None = None) -> dict[str, list[str]]:
    """Document id -> its chunk texts in reading order (documents read from `under`, or all)."""
    rows = store.query("MATCH (d:Document) OPTIONAL MATCH (c:Chunk {doc_id: d.id}) "
                       "RETURN d.id AS id, d.path AS path, c.text AS text, c.order AS o ORDER BY id, o")
    found: dict[str, list[str]] = {}
    for row in rows:
        if under is None or (row["path"] or "").startswith(str(under)):
            found.setdefault(row["id"], [])
            if row["text"] is not None:
                found[row["id"]].append(row["text"])
    return found


def _snapshot(store) -> tuple:
    """Everything a write could change that these tests can see: counts, documents, hashes, chunk signatures."""
    counts = store.counts()
    docs = store.query("MATCH (d:Document) RETURN d.id AS id, d.content_hash AS h, d.path AS p, "
                       "d.updated_at AS u ORDER BY id")
    chunks = store.query("MATCH (c:Chunk) RETURN c.id AS id, c.text AS t, c.enriched AS e ORDER BY id")
    return counts.nodes, counts.relationships, docs, chunks


def _failing_checks(store) -> dict[str, int]:
    return {row["check"]: row["failing"] for row in store.query(explore_query("integrity_checks").text)
            if row["failing"]}


def _ingest_fresh(store, embedder, path: Path) -> dict[str, list[str]]:
    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(path)
    return _documents(store)


def test_a_folder_is_mirrored_and_the_removed_documents_facts_go(kb, embedder, second_store, tmp_path):
    folder = _write(tmp_path / "docs", PAGES)
    first = kb.sync(folder)
    assert (len(first.added), len(first.updated), len(first.deleted), first.unchanged) == (4, 0, 0, 0)
    assert first.next_steps == [] and first.skipped == []
    kb.enrich("kg", "fast", n_process=1)
    history_id = (folder / "history.txt").as_uri()
    store = kb.store
    eiffel = "MATCH (e:Entity) WHERE e.name = 'Gustave Eiffel' RETURN e.id AS id"
    assert store.query(eiffel), "the fast extractor should find Gustave Eiffel in history.txt"
    removed_chunks = [row["id"] for row in store.run("document_chunk_ids", {"doc_ids": [history_id]})]
    assert removed_chunks

    # history.txt removed, guide.md changed, new.md added; memory.html and notes/tips.md untouched
    (folder / "history.txt").unlink()
    (folder / "guide.md").write_text(PAGES["guide.md"] + "\nA cancelled task raises CancelledError.\n")
    (folder / "new.md").write_text("# New\n\nThe walrus operator assigns inside expressions.\n")

    # a dry run lists the changes and writes nothing (the store refuses every write meanwhile)
    before = _snapshot(store)
    store.read_only = True
    try:
        dry = kb.sync(folder, dry_run=True)
    finally:
        store.read_only = False
    assert _snapshot(store) == before
    assert dry.dry_run and dry.ingest is None and dry.unchanged == 2
    assert [(d.id, d.path) for d in dry.added] == [((folder / "new.md").as_uri(), str(folder / "new.md"))]
    assert [(d.id, d.path) for d in dry.updated] == [((folder / "guide.md").as_uri(), str(folder / "guide.md"))]
    assert [(d.id, d.path) for d in dry.deleted] == [(history_id, str(folder / "history.txt"))]
    assert dry.next_steps == ["neoweave enrich kg --method fast"]

    refreshes = []
    refresh = store.refresh_vector_indexes
    store.refresh_vector_indexes = lambda labels, force=False: refreshes.append(labels) or refresh(labels, force)
    try:
        report = kb.sync(folder)
    finally:
        del store.refresh_vector_indexes
    assert refreshes == [("Chunk", "Entity")]  # once for the update and the deletion
    assert [d.id for d in report.added] == [d.id for d in dry.added]
    assert [d.id for d in report.updated] == [d.id for d in dry.updated]
    assert [d.id for d in report.deleted] == [history_id] and report.unchanged == 2 and report.kept == []
    assert report.ingest.documents_new == 1 and report.ingest.documents_changed == 1
    # the graph holds what ingesting the final folder from scratch gives: same documents, same chunk texts
    assert _documents(store) == _ingest_fresh(second_store, embedder, folder)
    # the removed document's chunks and every fact derived from them are gone
    assert store.run("document_chunk_ids", {"doc_ids": [history_id]}) == []
    assert not store.query(eiffel)
    citing = store.query("MATCH (:Entity)-[r:RELATED]->(:Entity) UNWIND "
                         "coalesce(r.chunk_ids, [r.chunk_id]) AS chunk_id "
                         "WITH chunk_id WHERE chunk_id IN $ids RETURN count(*) AS n", {"ids": removed_chunks})
    assert citing[0]["n"] == 0
    described = store.query("MATCH (e:Entity) WHERE e.description_chunk IN $ids RETURN count(e) AS n",
                            {"ids": removed_chunks})
    assert described[0]["n"] == 0
    assert _failing_checks(store) == {}
    # kg is behind the new and changed chunks: the report says so, and the command it names catches up
    kg = next(layer for layer in report.layers if layer.step == "kg")
    assert kg.method == "fast" and kg.pending > 0 and kg.stale
    assert report.next_steps == ["neoweave enrich kg --method fast"]
    kb.enrich("kg", "fast", n_process=1)
    again = kb.sync(folder)
    assert (len(again.added), len(again.updated), len(again.deleted), again.unchanged) == (0, 0, 0, 4)
    assert again.next_steps == [] and again.layers[0].pending == 0
    assert _failing_checks(store) == {}


def test_a_record_removed_from_a_jsonl_file_is_a_deleted_document(kb, embedder, second_store, tmp_path):
    corpus = _jsonl(tmp_path / "corpus.jsonl", RECORDS)
    assert len(kb.sync(corpus).added) == 4
    changed = dict(RECORDS[2], text="Teutberga was queen of Lotharingia and wife of Lothair II.")
    _jsonl(corpus, [RECORDS[0], changed, RECORDS[3], {"id": "r5", "title": "Aachen", "text": "Aachen is a city."}])
    report = kb.sync(corpus)
    assert [d.id for d in report.deleted] == ["r2"] and [d.id for d in report.updated] == ["r3"]
    assert [d.id for d in report.added] == ["r5"] and report.unchanged == 2
    assert report.added[0].source == f"{corpus}:4" and report.deleted[0].path == str(corpus)
    assert _documents(kb.store) == _ingest_fresh(second_store, embedder, corpus)


def test_records_of_jsonl_files_under_a_folder_and_unreadable_files(kb, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    _jsonl(folder / "a.jsonl", RECORDS[:2])
    _jsonl(folder / "b.jsonl", RECORDS[2:])
    assert len(kb.sync(folder).added) == 4
    _jsonl(folder / "a.jsonl", RECORDS[:1])  # r2 removed from a.jsonl
    (folder / "b.jsonl").write_bytes(b"\x00binary now")  # b.jsonl cannot be read: its records are kept
    report = kb.sync(folder)
    assert [d.id for d in report.deleted] == ["r2"]
    assert [d.id for d in report.kept] == ["r3", "r4"] and "binary file" in report.kept[0].reason
    assert report.skipped and set(_documents(kb.store)) == {"r1", "r3", "r4"}


def test_a_missing_path_is_refused_and_an_emptied_folder_needs_allow_empty(kb, tmp_path, workdir):
    folder = _write(tmp_path / "docs", PAGES)
    kb.sync(folder)
    before = _snapshot(kb.store)
    for missing in (tmp_path / "dcos", "dcos/", Path("no") / "such"):
        with pytest.raises(NeoweaveError, match="sync path not found") as error:
            kb.sync(missing)
        assert str(missing).rstrip("/") in error.value.message
        with pytest.raises(NeoweaveError, match="sync path not found"):
            kb.sync(missing, dry_run=True)
    assert "dcos (" + str(workdir / "dcos") in _message(kb, "dcos")  # a relative path is shown resolved too
    # an empty folder (an unmounted disk looks like one) does not empty the graph unless asked to
    for page in PAGES:
        (folder / page).unlink()
    dry = kb.sync(folder, dry_run=True)
    assert len(dry.deleted) == 4 and "refusing to delete them all" in dry.warnings[0]
    with pytest.raises(NeoweaveError, match="yields no document now, but 4 document"):
        kb.sync(folder)
    assert _snapshot(kb.store) == before
    emptied = kb.sync(folder, allow_empty=True)
    assert len(emptied.deleted) == 4 and _documents(kb.store) == {}


def _message(kb, path) -> str:
    with pytest.raises(NeoweaveError) as error:
        kb.sync(path)
    return error.value.message


def test_documents_from_other_paths_are_untouched(kb, tmp_path):
    docs, docs2 = _write(tmp_path / "docs", PAGES), _write(tmp_path / "docs2", {"other.md": "# Other\n\nKept.\n"})
    records = _jsonl(tmp_path / "records.jsonl", RECORDS[:2])
    kb.sync(docs)
    kb.ingest(docs2)  # a sibling whose path starts with the same characters
    kb.ingest(records)
    kb.ingest([{"id": "mem1", "title": "In memory", "text": "A record handed over in memory."}])
    outside = {doc_id: texts for doc_id, texts in _documents(kb.store).items()
               if not doc_id.startswith(docs.as_uri() + "/")}
    assert len(outside) == 4
    (docs / "history.txt").unlink()
    (docs / "notes" / "tips.md").unlink()
    report = kb.sync(docs)
    assert sorted(d.id for d in report.deleted) == [(docs / "history.txt").as_uri(),
                                                    (docs / "notes" / "tips.md").as_uri()]
    assert report.unattributed == 1  # the in-memory record: no source file, never synced
    remaining = _documents(kb.store)
    assert {doc_id: remaining[doc_id] for doc_id in outside} == outside
    # a subfolder and a single file are paths of their own
    (docs / "notes" / "more.md").parent.mkdir(exist_ok=True)
    (docs / "notes" / "more.md").write_text("# More\n\nMore notes.\n")
    sub = kb.sync(docs / "notes")
    assert [d.id for d in sub.added] == [(docs / "notes" / "more.md").as_uri()] and sub.deleted == []


def test_relative_trailing_slash_and_symlinked_paths_are_the_same_folder(kb, tmp_path, workdir):
    folder = _write(workdir / "docs", PAGES)
    kb.sync(folder)
    link = tmp_path / "link"
    link.symlink_to(folder, target_is_directory=True)
    for given in ("docs", "docs/", "./docs//", str(link), str(link) + "/"):
        report = kb.sync(given)
        assert (len(report.added), len(report.deleted), report.unchanged) == (0, 0, 4), given
        assert report.path == str(folder.resolve())


def test_cli_sync_dry_run_json_and_errors(cli, workdir):
    folder = _write(workdir / "docs", PAGES)
    out = cli("sync", "docs", "--no-progress").stdout
    assert "synced from " + str(folder) in " ".join(out.split()) and "added: " in out
    (folder / "history.txt").unlink()
    dry = json.loads(cli("sync", "docs/", "--dry-run", "--json").stdout)
    assert (dry["added"], dry["updated"], dry["deleted"], dry["unchanged"]) == (0, 0, 1, 3)
    assert dry["dry_run"] and dry["documents"]["deleted"] == [
        {"id": (folder / "history.txt").as_uri(), "path": str(folder / "history.txt"), "source": "", "reason": ""}]
    shown = cli("sync", "docs", "--dry-run").stdout
    assert "would be deleted: " + (folder / "history.txt").as_uri() in shown and "nothing was written" in shown
    assert json.loads(cli("status", "--json").stdout)["nodes"]["Document"] == 4
    done = json.loads(cli("sync", "docs", "--json").stdout)
    assert done["deleted"] == 1 and done["unchanged"] == 3 and done["ingest"]["documents_unchanged"] == 3
    assert json.loads(cli("status", "--json").stdout)["nodes"]["Document"] == 3
    missing = cli("sync", "dcos", check=False)
    assert missing.returncode == 1 and "sync path not found: dcos" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_next_steps_name_every_built_layer_and_bring_it_up_to_date(kb, tmp_path):
    corpus = _jsonl(tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    kb.sync(corpus)
    kb.enrich("kg", "fast", n_process=1)
    kb.enrich("communities")
    assert kb.store.counts().nodes.get("Community", 0) > 0
    assert kb.sync(corpus).next_steps == []  # nothing changed: nothing to redo
    _jsonl(corpus, [r for r in COMMUNITY_CORPUS if r["id"] != "k2"])
    report = kb.sync(corpus)
    assert [d.id for d in report.deleted] == ["k2"]
    assert report.next_steps == ["neoweave enrich kg --method fast", "neoweave enrich communities --method fast"]
    assert [(layer.step, layer.pending) for layer in report.layers] == [("kg", 0), ("communities", 0)]
    for layer in report.layers:
        kb.enrich(layer.step, layer.method, **({"n_process": 1} if layer.step == "kg" else {}))
    assert _failing_checks(kb.store) == {}


def test_unchanged_files_are_not_parsed_again(kb, tmp_path, monkeypatch):
    """A re-read compares a file's content hash with its stored document's before parsing it: parsing is most of
    a re-read's time (the Python docs: 65 s for a sync that changed nothing), and it could only give what is
    stored. A changed file is parsed; a chunking change parses them all."""
    from neoweave.ingest import html, text

    folder = _write(tmp_path / "docs", PAGES)
    kb.sync(folder)
    parsed: list[str] = []
    for module, name in ((html, "parse_html"), (text, "parse_text")):
        original = getattr(module, name)

        def counting(*args, _original=original, **kwargs):
            parsed.append(kwargs["source"])
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    before = _snapshot(kb.store)
    again = kb.sync(folder)
    assert parsed == [] and again.unchanged == 4 and not (again.added or again.updated or again.deleted)
    assert again.ingest.documents_unchanged == 4 and _snapshot(kb.store) == before
    assert kb.sync(folder, dry_run=True).unchanged == 4 and parsed == []
    assert kb.ingest(folder).documents_unchanged == 4 and parsed == []

    (folder / "guide.md").write_text(PAGES["guide.md"] + "\nA cancelled task raises CancelledError.\n")
    report = kb.sync(folder)
    assert parsed == [str(folder / "guide.md")]
    assert [d.id for d in report.updated] == [(folder / "guide.md").as_uri()] and report.unchanged == 3
    parsed.clear()
    assert kb.ingest(folder, chunk_size=300).documents_changed == 4 and len(parsed) == 4
