"""The rows entity resolution reads, saved between kg runs: a later save writes only what changed, and a new process
(a store object without the copy) reads back exactly the rows saved last (real store directory and SQLite file).
tests/test_kg_changes.py compares the state they give with a whole read after every step of a history."""

from __future__ import annotations

import sqlite3

from neoweave.enrich import resolution_state
from neoweave.enrich.resolution_state import ENTITY_COLUMNS, Rows


def _entity(entity_id: str, name: str, mentions: int) -> dict:
    return {"id": entity_id, "key": name.lower(), "name": name, "type": "PERSON", "method": "fast",
            "mentions": mentions, "aliases": None}


def _form(holder: str, origin: str, name: str, chunk: str, docs: list[str]) -> dict:
    return {"entity_id": holder, "origin_id": origin, "first_chunk": chunk, "name": name, "type": "PERSON",
            "method": "fast", "count": 1, "doc_ids": docs}


def _as_saved(rows: Rows) -> tuple:
    return ({key: {c: row[c] for c in ENTITY_COLUMNS} for key, row in rows.entities.items()}, rows.forms,
            rows.documents)


def test_a_later_save_writes_what_changed_and_a_new_process_reads_the_rows_saved_last(falkordb_store):
    store = falkordb_store
    first = Rows({"person:a": _entity("person:a", "Ada Byron", 3), "person:b": _entity("person:b", "Byron", 1),
                  "person:d": _entity("person:d", "Dora", 2)},
                 {"person:a": [_form("person:a", "person:a", "Ada Byron", "d1#0", ["d1"]),
                               _form("person:a", "person:ada", "Ada", "d1#1", ["d1"])],
                  "person:d": [_form("person:d", "person:d", "Dora", "d3#0", ["d3"])]},
                 {"person:b": {"d1"}})
    resolution_state._save(store, "token-1", 5, first, None, set())
    read_over = store.derived["resolution_state"]  # what this process read the next rows over
    # a write: a's forms gain a document (a survivor that stays one), b renamed, c new, d gone with its forms
    second = Rows({"person:a": _entity("person:a", "Ada Byron", 4), "person:b": _entity("person:b", "Lord Byron", 1),
                   "person:c": _entity("person:c", "Charles", 1)},
                  {"person:a": [_form("person:a", "person:a", "Ada Byron", "d1#0", ["d1", "d2"]),
                                _form("person:a", "person:ada", "Ada", "d1#1", ["d1"])]},
                  {"person:b": {"d1", "d2"}, "person:c": {"d2"}})
    resolution_state._save(store, "token-1", 9, second, read_over, {"person:a", "person:b", "person:c", "person:d"})
    path = store.derived_directory("resolution") / "state.sqlite"
    with sqlite3.connect(path) as connection:  # one row per entity, survivor and lone person: rewritten in place
        assert [connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("entities", "forms", "documents")] == [3, 1, 2]

    store.derived.clear()  # a new process
    loaded = resolution_state._load(store)
    assert (loaded["token"], loaded["position"]) == ("token-1", 9)
    assert _as_saved(loaded["rows"]) == _as_saved(second)
    assert resolution_state._load(store) is loaded  # the copy, while the file stays at its version

    resolution_state.forget_saved(store)  # a restore
    assert resolution_state._load(store) is None and not path.exists()


def test_rows_read_over_a_version_another_process_replaced_are_saved_whole(falkordb_store):
    """Two processes' runs interleaved: one saves over the version the other read its rows over; the other's
    save then writes every row (its few changed rows over the newer file would mix two positions)."""
    store = falkordb_store
    ada = Rows({"person:a": _entity("person:a", "Ada", 1)}, {}, {})
    resolution_state._save(store, "token-1", 5, ada, None, set())
    read_over = store.derived["resolution_state"]
    other = Rows({"person:a": _entity("person:a", "Ada", 1), "person:x": _entity("person:x", "Xavier", 2)}, {},
                 {"person:x": {"d9"}})
    resolution_state._save(store, "token-1", 7, other, None, set())  # another process
    mine = Rows({"person:a": _entity("person:a", "Ada", 2)}, {}, {})
    resolution_state._save(store, "token-1", 9, mine, read_over, {"person:a"})
    store.derived.clear()
    loaded = resolution_state._load(store)
    assert loaded["position"] == 9 and _as_saved(loaded["rows"]) == _as_saved(mine)
