"""The entity layer as resolution reads it, kept between runs and brought up to date from the record of change.

Resolution (`resolution_derived`) re-makes every merge decision from the current mentions, so each kg run needs
every origin entity (*atom*): each entity's row, and the forms its merges folded into a survivor's MENTIONS lists.
Reading them all made the state most of a small write's resolution time, and it grows with the graph. The rows are
a function of the entities' mentions, and every write that changes an entity's mentions logs the entity in the kg
step's record of change (`enrich.kg_changes`) in the same write unit, so the rows read by one run stay true for all
but the entities logged since: a run re-reads those (their entity rows, their folded forms when they are
survivors, the documents of lone person names) and keeps the rest from the rows saved by the previous run.

The saved rows live next to the store's own files (`GraphStore.derived_directory`), in a SQLite file with the
log's token and the position they were read at; a run writes only the rows that changed (one transaction), so a
small write writes a little, and the store object keeps its copy while the file stays at its version. They are
not used when the log cannot say what changed since (another token, a position out of its window, no log: a
first run, a user's Cypher write), nor after a restore (`forget_saved`); a store without a local directory keeps
them in memory only. Merge records are few and read whole every time. Both ways assemble the state from the rows
in one function, so they give the same state (tests/test_kg_changes.py compares them after every step of a
history of writes).
"""

from __future__ import annotations

import json
import logging
import secrets
import shutil
import sqlite3
from collections import defaultdict
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neoweave.enrich.kg_changes import read_log
from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

DERIVED_METHOD = "rule"
FORMAT = 1
"""Version of the saved rows' layout: another one is read afresh."""
ENTITY_COLUMNS = ("id", "key", "name", "type", "method", "mentions")
"""The columns of an entity's row that the state uses, saved as a list (a list per row loads in half the time)."""
IDS_PAGE = 500
"""Ids per statement of a read by ids."""


@dataclass(slots=True)
class Atom:
    id: str
    key: str
    name: str
    group: str
    type: str | None
    method: str | None
    mentions: int
    holders: set[str] = field(default_factory=set)
    """The entity nodes whose MENTIONS hold this form (itself when it stands alone)."""


@dataclass
class State:
    """The entity layer as resolution reads it."""

    atoms: dict[str, Atom]
    entities: set[str]
    records: dict[str, dict]
    """Active derived merge records by id."""
    undone: set[frozenset[str]]
    documents: dict[str, set[str]]
    read_again: int | None = None
    """The entities whose rows were read again (None: every row was read)."""

    _held: dict[str, frozenset[str]] | None = field(default=None, init=False, repr=False, compare=False)

    def held_by(self) -> dict[str, frozenset[str]]:
        """Entity node -> the atoms its MENTIONS hold (computed once: a state is read, then only looked at)."""
        if self._held is None:
            held: dict[str, set[str]] = defaultdict(set)
            for atom in self.atoms.values():
                for holder in atom.holders:
                    held[holder].add(atom.id)
            self._held = {holder: frozenset(atoms) for holder, atoms in held.items()}
        return self._held


@dataclass
class Rows:
    """What the state is assembled from, as the statements return it."""

    entities: dict[str, dict[str, Any]]
    """Entity id -> its `entity_resolution_candidates` row."""
    forms: dict[str, list[dict[str, Any]]]
    """Survivor id -> its `entity_resolution_origin_forms` rows."""
    documents: dict[str, set[str]]
    """Lone entity id -> the documents mentioning it (read for person names only)."""


def save_state(store: GraphStore) -> None:
    """Bring the saved rows up to date (after the kg step's last entity writes), unless nothing was logged since
    they were read."""
    held, saved = read_log(store), _load(store)
    if held is None or saved is None or held.since(saved["token"], saved["position"]) != []:
        read_state(store)


def read_state(store: GraphStore) -> State:
    """The state now: from the rows the previous run saved and those of the entities logged since, when the
    record of change can say what that is; else from every row. The rows are saved for the next run."""
    held = read_log(store)  # before the graph: what is logged meanwhile is read again next time
    every = store.run("entity_merge_records")
    records = {r["id"]: r for r in every if r["status"] == "merged" and r["method"] == DERIVED_METHOD}
    undone = {frozenset((r["survivor_id"], r["absorbed_id"])) for r in every if r["status"] == "undone"}
    saved = _load(store)
    changed = None
    if held is not None and saved is not None:
        changed = held.since(saved["token"], saved["position"])
    if changed is None:
        entities = {r["id"]: r for r in store.run("entity_resolution_candidates")}
        forms = _read_forms(store, _survivors(records, entities))
        kept_documents: dict[str, set[str]] = {}
    else:
        rows, changed_ids = saved["rows"], set(changed)
        entities = {key: row for key, row in rows.entities.items() if key not in changed_ids}
        ids = sorted(changed_ids)
        for start in range(0, len(ids), IDS_PAGE):
            for row in store.run("entity_resolution_candidates_of", {"ids": ids[start:start + IDS_PAGE]}):
                entities[row["id"]] = row
        survivors = _survivors(records, entities)
        forms = {holder: rows.forms[holder] for holder in survivors
                 if holder in rows.forms and holder not in changed_ids}
        forms.update(_read_forms(store, [holder for holder in survivors if holder not in forms]))
        kept_documents = {key: docs for key, docs in rows.documents.items() if key not in changed_ids}
    state = assemble(Rows(entities, forms, {}), records, undone)
    person_keys = {a.key for a in state.atoms.values() if a.group == "person"}
    lone = {a.id for a in state.atoms.values() if a.key in person_keys and a.id not in state.documents}
    documents = {key: kept_documents[key] for key in lone if key in kept_documents}
    documents.update(_read_documents(store, sorted(lone - documents.keys())))
    for key in sorted(documents):  # what `assemble` gives from these rows
        state.documents[key] = set(documents[key])
    if held is not None and held.token is not None and (changed is None or changed):
        _save(store, held.token, held.end, Rows(entities, forms, documents), None if changed is None else saved,
              set(changed or ()))
    state.read_again = None if changed is None else len(set(changed))
    return state


def _survivors(records: dict[str, dict], entities: dict[str, Any]) -> list[str]:
    return sorted({r["survivor_id"] for r in records.values()} & entities.keys())


def _read_forms(store: GraphStore, survivors: list[str]) -> dict[str, list[dict[str, Any]]]:
    forms: dict[str, list[dict[str, Any]]] = {holder: [] for holder in survivors}
    for start in range(0, len(survivors), IDS_PAGE):
        for row in store.run("entity_resolution_origin_forms", {"ids": survivors[start:start + IDS_PAGE]}):
            forms[row["entity_id"]].append(row)
    return forms


def _read_documents(store: GraphStore, ids: list[str]) -> dict[str, set[str]]:
    documents: dict[str, set[str]] = {}
    for start in range(0, len(ids), 1000):
        for row in store.run("entity_documents", {"ids": ids[start:start + 1000]}):
            documents[row["id"]] = set(row["doc_ids"])
    return documents


def assemble(rows: Rows, records: dict[str, dict], undone: set[frozenset[str]]) -> State:
    """The state from its rows (the one recipe of both ways of reading)."""
    entities = rows.entities
    survivors = _survivors(records, entities)
    absorbed_types = {r["absorbed_id"]: json.loads(r["absorbed_json"] or "{}").get("type") for r in records.values()}
    atoms: dict[str, Atom] = {}
    held = set(survivors)
    for entity_id in sorted(entities):
        row = entities[entity_id]
        if entity_id not in held:
            atoms[entity_id] = Atom(entity_id, row["key"] or entity_id.split(":", 1)[-1], row["name"] or "",
                                    entity_id.split(":", 1)[0], row["type"], row["method"], int(row["mentions"] or 0),
                                    {entity_id})
    origins: dict[str, list[dict]] = defaultdict(list)
    for holder in survivors:
        for row in rows.forms.get(holder, []):
            origins[row["origin_id"]].append(row)
    documents: dict[str, set[str]] = {}
    for origin in sorted(origins):
        found = origins[origin]
        first = min(found, key=lambda r: (r["first_chunk"], r["entity_id"]))
        holders = {r["entity_id"] for r in found}
        if origin in atoms:  # also standing alone (not made by neoweave's writes): a discrepancy to repair
            atoms[origin].holders |= holders
            continue
        fallback = entities[origin]["type"] if origin in entities else absorbed_types.get(origin)
        atoms[origin] = Atom(origin, origin.split(":", 1)[-1], first["name"] or "", origin.split(":", 1)[0],
                             first["type"] or fallback, first["method"],
                             sum(int(r["count"] or 0) for r in found), holders)
        documents[origin] = {doc for r in found for doc in r["doc_ids"]}
    for entity_id, docs in rows.documents.items():
        if entity_id in atoms and entity_id not in documents:
            documents[entity_id] = set(docs)
    return State(atoms, set(entities), records, undone, documents)


# -- the saved rows ---------------------------------------------------------------------------------
_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS entities (id TEXT PRIMARY KEY, key TEXT, name TEXT, type TEXT, method TEXT,"
    " mentions INTEGER)",
    "CREATE TABLE IF NOT EXISTS forms (holder TEXT PRIMARY KEY, rows TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, doc_ids TEXT NOT NULL)",
)


def _path(store: GraphStore) -> Path | None:
    directory = store.derived_directory("resolution")
    return None if directory is None else directory / "state.sqlite"


def _load(store: GraphStore) -> dict[str, Any] | None:
    """The saved rows with their log token and position, or None (none saved, unreadable, another layout): the
    copy this store object holds when the file is still at its version, else the file's."""
    path = _path(store)
    kept = store.derived.get("resolution_state")
    if path is None:
        return kept  # type: ignore[no-any-return]
    if not path.exists():
        return None
    try:
        with closing(sqlite3.connect(path, timeout=30)) as connection:
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != str(FORMAT):
                return None
            if kept is not None and kept["version"] == meta["version"]:
                return kept  # type: ignore[no-any-return]
            entities = {values[0]: dict(zip(ENTITY_COLUMNS, values, strict=True)) for values in connection.execute(
                "SELECT id, key, name, type, method, mentions FROM entities")}
            forms = {holder: json.loads(rows) for holder, rows in connection.execute("SELECT holder, rows FROM forms")}
            documents = {key: set(json.loads(docs)) for key, docs in connection.execute(
                "SELECT id, doc_ids FROM documents")}
        loaded = {"token": meta["token"], "position": int(meta["position"]), "version": meta["version"],
                  "rows": Rows(entities, forms, documents)}
    except (sqlite3.Error, OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("resolution: the saved state in %s is unreadable (%s): every entity is read", path, exc)
        return None
    store.derived["resolution_state"] = loaded
    return loaded


def _save(store: GraphStore, token: str, position: int, rows: Rows, previous: dict[str, Any] | None,
          changed: set[str]) -> None:
    """Save `rows` as read at `position`: every row when `previous` (the saved rows they were read over, as
    `_load` gave them) is None or the file holds another version since, else only the rows that differ from
    `previous`'s (the `changed` entities', and the forms and documents read again), so that a small write writes
    a little. One transaction: a reader finds the rows of one position."""
    version = secrets.token_hex(8)
    path = _path(store)
    store.derived.pop("resolution_state", None)
    if path is None:
        store.derived["resolution_state"] = {"token": token, "position": position, "version": version, "rows": rows}
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                for statement in _TABLES:
                    connection.execute(statement)
                held = dict(connection.execute("SELECT key, value FROM meta").fetchall())
                over = previous["rows"] if previous and held.get("version") == previous["version"] else None
                _write_rows(connection, rows, over, changed)
                connection.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                    ("format", str(FORMAT)), ("token", token), ("position", str(position)), ("version", version)])
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
    except (sqlite3.Error, OSError, TypeError, ValueError) as exc:  # only a shortcut is lost: the next run reads all
        log.warning("resolution: could not save the state in %s: %s", path, exc)
        return
    store.derived["resolution_state"] = {"token": token, "position": position, "version": version, "rows": rows}


def _write_rows(connection: sqlite3.Connection, rows: Rows, over: Rows | None, changed: set[str]) -> None:
    """Every row (`over` None), or those that differ from the rows `over` the file holds."""
    if over is None:
        for table in ("entities", "forms", "documents"):
            connection.execute(f"DELETE FROM {table}")
        entities, forms, documents = list(rows.entities.values()), rows.forms, rows.documents
    else:
        entities = [rows.entities[key] for key in sorted(changed) if key in rows.entities]
        forms = {key: value for key, value in rows.forms.items() if over.forms.get(key) is not value}
        documents = {key: value for key, value in rows.documents.items() if over.documents.get(key) is not value}
        connection.executemany("DELETE FROM entities WHERE id = ?", [(key,) for key in sorted(changed)])
        connection.executemany("DELETE FROM forms WHERE holder = ?",
                               [(key,) for key in sorted(over.forms.keys() - rows.forms.keys())])
        connection.executemany("DELETE FROM documents WHERE id = ?",
                               [(key,) for key in sorted(over.documents.keys() - rows.documents.keys())])
    connection.executemany("INSERT OR REPLACE INTO entities VALUES (?, ?, ?, ?, ?, ?)",
                           [tuple(row[column] for column in ENTITY_COLUMNS) for row in entities])
    connection.executemany("INSERT OR REPLACE INTO forms VALUES (?, ?)",
                           [(key, json.dumps(value, ensure_ascii=False)) for key, value in forms.items()])
    connection.executemany("INSERT OR REPLACE INTO documents VALUES (?, ?)",
                           [(key, json.dumps(sorted(value))) for key, value in documents.items()])


def forget_saved(store: GraphStore) -> None:
    """A graph that may not descend from the saved rows (a restore): the next run reads every entity."""
    store.derived.pop("resolution_state", None)
    directory = store.derived_directory("resolution")
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
