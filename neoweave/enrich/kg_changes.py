"""What changed in the entity layer since `enrich kg` last completed its graph-wide phases.

Those phases (mention and relation counts, names, resolution, homes) used to read every entity whatever the size
of the increment: ~8 s of the 12 s an `enrich kg` of one new document took on the Python docs graph (13k
chunks), and they grow with the graph. Every write that changes an entity's mentions or relations records the
entity in a list on the Meta node 'kg_changes' in its own write unit:

- the kg writes (extraction, title mentions, imports): the entities written and the ends of their relations;
- forgetting a chunk's derivations (`store.provenance`: a document deleted or rewritten, a chunk re-extracted):
  the entities it mentions and the other ends of the relations citing it;
- merges and unmerges: both entities and the other ends of the absorbed entity's relations.

A run reads only those entities (`Scope`) when the node holds the fingerprint of the phases it would run (the
same step parameters, embedding model and code completed them last); otherwise (no node yet, another
fingerprint, a list past its cap) it reads every entity, as before, and leaves a valid record when it completes.
A run consumes the entries it read and keeps those written while it ran, so a write that races it is refreshed
next time; a run stopped half way consumes nothing.

Writes the record cannot see: Cypher typed by a user through `KnowledgeBase.cypher(write=True)` removes the node
(the next run reads everything); writes by other tools, or by neoweave versions before the record, are not seen:
`neoweave check` finds counts out of step, and `enrich kg -P scoped=false` reads everything once.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

CAP = 20_000
"""Entries the list holds before it gives way to `overflow` (the statements' literal): past it, reading every
entity costs about as much as reading the listed ones one by one."""


@dataclass
class Scope:
    """The entities a run's phases read: `None` is every entity."""

    entity_ids: frozenset[str] | None
    consumed: int = 0
    """Entries of the list this run has read (it removes them when it completes)."""

    @property
    def everything(self) -> bool:
        return self.entity_ids is None


class ChangeRecord:
    """The record of one graph, as a run of the kg step's phases uses it."""

    def __init__(self, store: GraphStore, fingerprint: str, *, scoped: bool = True) -> None:
        self.store = store
        self.fingerprint = fingerprint
        held = self._read()
        self.scoped = bool(scoped and held and held["fingerprint"] == fingerprint and not held["overflow"])
        self.finished = held["finished"] if held else None
        """The token of the completion the record describes (None when the run reads everything)."""
        if not self.scoped:
            store.run("kg_changes_open", {"restart": False}, write=True)
            self.finished = None
        self.scope = Scope(None)
        self._restarted = False

    def _read(self) -> dict | None:
        rows = self.store.run("kg_changes_get")
        return rows[0] if rows else None

    def refresh(self) -> Scope:
        """The scope of the phases from here on: what the list holds now (writes of earlier phases included).
        A run that reads everything empties the list here (its phases read what it named)."""
        held = self._read()
        if held is None or not self.scoped or held["overflow"]:
            if self.scoped:  # removed under the run (a user's Cypher write), or past its cap
                log.info("enrich kg: the record of change was lost or overflowed during the run; reading every "
                         "entity")
            self.scoped = False
            if not self._restarted or held is None:  # once: later entries (merges, racing writes) stay
                self.store.run("kg_changes_open", {"restart": True}, write=True)
                self._restarted = True
            self.scope = Scope(None)
        else:
            ids = held["entity_ids"]
            self.scope = Scope(frozenset(ids), consumed=len(ids))
        return self.scope

    def close(self) -> str:
        """The phases completed: consume what they read, record the fingerprint; returns the completion's token."""
        token = secrets.token_hex(8)
        self.store.run("kg_changes_close", {"consumed": self.scope.consumed, "fingerprint": self.fingerprint,
                                            "finished": token}, write=True)
        return token


def forget(store: GraphStore) -> None:
    """After writes the record cannot follow (a user's Cypher): the next run reads every entity."""
    store.run("kg_changes_forget", write=True)


def _titles_path(store: GraphStore) -> Path | None:
    directory = store.derived_directory("enrich")
    return None if directory is None else directory / "kg-titles.json"


def save_title_digests(store: GraphStore, finished: str, digests: dict[str, str]) -> None:
    """The title index's digests (`TitleIndex.digests`) as of the completion `finished`: the next run's homes
    phase reads only the entities named by titles that changed since. A store without a local directory (a
    remote server) keeps none, and its homes phase reads every entity."""
    path = _titles_path(store)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps({"finished": finished, "digests": digests}), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:  # only a shortcut is lost: the next homes phase reads every entity
        log.warning("could not save the title digests in %s: %s", path, exc)


def load_title_digests(store: GraphStore, finished: str | None) -> dict[str, str] | None:
    """The digests saved by the completion `finished`, or None (another completion's, or none)."""
    path = _titles_path(store)
    if path is None or finished is None:
        return None
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return held.get("digests") if held.get("finished") == finished else None
