"""What changed in the entity layer since `enrich kg` last completed its graph-wide phases.

Those phases (mention and relation counts, names, resolution, homes) used to read every entity whatever the size
of the increment: ~8 s of the 12 s an `enrich kg` of one new document took on the Python docs graph (13k
chunks), and they grow with the graph. Every write that changes an entity's mentions or relations records the
entity in a list on the Meta node 'kg_changes' in its own write unit:

- the kg writes (extraction, title mentions, imports): the entities written and the ends of their relations;
- forgetting a chunk's derivations (`store.provenance`: a document deleted or rewritten, a chunk re-extracted):
  the entities it mentions and the other ends of the relations citing it;
- merges and unmerges: both entities and the other ends of the absorbed entity's relations.

The list is a log with a window: it keeps at most its last `CAP` entries, and each reader remembers the absolute
position it read up to (the kg step on the node; ppr's walk index in its own files, and on the node when the
knowledge base built it after a write: `query.walk_build` re-reads only the listed entities' mentions and
relations). Entries both readers are past leave the log (the walk index counts only once it recorded a
position), so the ids of a deleted document's entities do not outlive the next `enrich kg`. A reader whose
position fell out of the window, or who read a log since started afresh (another token), reads everything.

A kg run reads only the entities after its position (`Scope`) when the node holds the fingerprint of the phases
it would run (the same step parameters, embedding model and code completed them last); otherwise (no node yet,
another fingerprint, a position out of the window) it reads every entity, as before, starts the log afresh and
leaves a valid record when it completes. A run moves its position past the entries it read and not past those
written while it ran, so a write that races it is refreshed next time; a run stopped half way moves nothing.

Writes the record cannot see: Cypher typed by a user through `KnowledgeBase.cypher(write=True)` removes the node
(the next run reads everything); writes by other tools, or by neoweave versions before the record, are not seen:
`neoweave check` finds counts out of step, and `enrich kg -P scoped=false` reads everything once.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass

from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

CAP = 20_000
"""Entries the log keeps (the statements' literal): a reader further behind reads every entity, which then costs
about as much as reading the listed ones one by one."""


@dataclass(frozen=True)
class Log:
    """The log as one read of the node: its token, the position of its first kept entry, the kg step's position
    (None before its phases first completed), the entries kept and the record's fingerprint and token."""

    token: str | None
    base: int
    consumed: int | None
    entity_ids: tuple[str, ...]
    fingerprint: str | None = None
    finished: str | None = None

    @property
    def end(self) -> int:
        """The position after the last entry."""
        return self.base + len(self.entity_ids)

    def since(self, token: str | None, position: int | None) -> list[str] | None:
        """The entries after `position` of the log named `token`, or None when this log cannot say (another
        token, or the position is out of its window)."""
        if self.token is None or token != self.token or position is None or not self.base <= position <= self.end:
            return None
        return list(self.entity_ids[position - self.base:])


def read_log(store: GraphStore) -> Log | None:
    """The record of change as it is now, or None without one."""
    rows = store.run("kg_changes_get")
    if not rows:
        return None
    row = rows[0]
    consumed = row["consumed"]
    return Log(row["log"], int(row["base"] or 0), None if consumed is None else int(consumed),
               tuple(row["entity_ids"]), row["fingerprint"], row["finished"])


@dataclass
class Scope:
    """The entities a run's phases read: `None` is every entity."""

    entity_ids: frozenset[str] | None
    position: int = 0
    """The log position this run has read up to (its close records it)."""

    @property
    def everything(self) -> bool:
        return self.entity_ids is None


class ChangeRecord:
    """The record of one graph, as a run of the kg step's phases uses it."""

    def __init__(self, store: GraphStore, fingerprint: str, *, scoped: bool = True) -> None:
        self.store = store
        self.fingerprint = fingerprint
        held = read_log(store)
        self.scoped = bool(scoped and held and held.fingerprint == fingerprint
                           and held.since(held.token, held.consumed) is not None)
        self.finished = held.finished if held else None
        """The token of the completion the record describes (None when the run reads everything)."""
        self.token = held.token if held else None
        if not self.scoped:
            self._open(restart=False)
            self.finished = None
        self.scope = Scope(None)
        self._restarted = False

    def _open(self, *, restart: bool) -> None:
        self.store.run("kg_changes_open", {"restart": restart, "log": secrets.token_hex(8)}, write=True)
        held = read_log(self.store)
        self.token = held.token if held else None

    def refresh(self) -> Scope:
        """The scope of the phases from here on: what the log holds after the kg step's position now (writes of
        earlier phases included). A run that reads everything starts the log afresh here (its phases read what
        it named)."""
        held = read_log(self.store)
        listed = None if held is None or not self.scoped else held.since(self.token, held.consumed)
        if listed is None:
            if self.scoped:  # removed under the run (a user's Cypher write), or out of the window
                log.info("enrich kg: the record of change was lost or overflowed during the run; reading every "
                         "entity")
            self.scoped = False
            if not self._restarted or held is None:  # once: later entries (merges, racing writes) stay
                self._open(restart=True)
                self._restarted = True
                self.scope = Scope(None, position=0)
            elif held.token == self.token:  # the phases from here on read every entity: what the log holds now
                self.scope = Scope(None, position=held.end)  # too (the run's own merges: the next run skips them)
            else:
                self.scope = Scope(None, position=self.scope.position)
        else:
            self.scope = Scope(frozenset(listed), position=held.end)  # type: ignore[union-attr]
        return self.scope

    def close(self) -> str:
        """The phases completed: move the kg step's position past what they read, record the fingerprint;
        returns the completion's token."""
        token = secrets.token_hex(8)
        self.store.run("kg_changes_close", {"consumed": self.scope.position, "log": self.token,
                                            "fingerprint": self.fingerprint, "finished": token}, write=True)
        return token


def walk_read(store: GraphStore, token: str, position: int) -> None:
    """ppr's walk index was built from the log `token` up to `position`: entries both readers are past leave it
    (a deleted document's entity ids do not outlive the next `enrich kg`). Bookkeeping: the write stamp stays,
    so the index just built and the kg step's finish record stay current."""
    store.run_bookkeeping("kg_changes_walk_read", {"log": token, "position": position})


def forget(store: GraphStore) -> None:
    """After writes the record cannot follow (a user's Cypher): the next run reads every entity."""
    store.run("kg_changes_forget", write=True)


def save_title_digests(store: GraphStore, finished: str, digests: dict[str, str]) -> None:
    """The title index's digests (`TitleIndex.digests`) as of the completion `finished`, kept on the record's Meta
    node (bookkeeping: exports leave them out), so that a store on a remote server keeps them too: the next run's
    title scan and homes phase read only the entities and mentions of titles that changed since."""
    store.run_bookkeeping("kg_changes_titles_set", {"finished": finished,
                                                    "digests": json.dumps(digests, sort_keys=True)})


def load_title_digests(store: GraphStore, finished: str | None) -> dict[str, str] | None:
    """The digests saved by the completion `finished`, or None (another completion's, or none)."""
    if finished is None:
        return None
    rows = store.run("kg_changes_titles_get")
    if not rows or rows[0]["finished"] != finished:
        return None
    try:
        held = json.loads(rows[0]["digests"] or "")
    except ValueError:
        return None
    return held if isinstance(held, dict) else None
