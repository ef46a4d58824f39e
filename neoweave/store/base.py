"""The GraphStore interface every backend implements, and what it returns."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

from neoweave.config import EXACT_SEARCH_BELOW
from neoweave.cypher import registry
from neoweave.cypher.registry import VECTOR_SEARCH_BREADTH, Statement
from neoweave.errors import ReadOnlyViolation, SchemaMismatch
from neoweave.graph_schema.model import SCHEMA, SCHEMA_VERSION, GraphSchema
from neoweave.graph_schema.render import Backend, DdlStep
from neoweave.store.migrations import upgrade
from neoweave.store.read_limit import bounded_read
from neoweave.store.values import (
    META_ID,
    Counts,
    Hit,
    WriteSpan,
    batched,
    fulltext_terms,
    looks_like_write,
    now_iso,
    strip_vectors,
)
from neoweave.store.write_unit import WriteUnit

log = logging.getLogger(__name__)
T = TypeVar("T")
RECENT_STATEMENTS = 256
"""How many statement names a store remembers (`recent_statements`): enough to debug, bounded under a server."""
LABEL_SIZE_SECONDS = 10.0
"""How long a store trusts the label counts that choose exact or index search (another process may be writing)."""

class GraphStore(ABC):
    """Run named statements, batched writes and index searches against one graph.

    Subclasses implement `_execute` (one statement, parameters, read or write) and the backend-specific
    schema steps; everything else is shared.
    """

    backend: Backend
    node_page_start: Any = ""
    """The cursor before a label's first node in `{{node_after}}` paging: by key here (Neo4j), by internal node id
    from -1 on FalkorDB."""
    exact_search_below: int = EXACT_SEARCH_BELOW
    """Vector searches of a label with at most this many nodes compare every vector (`Statement.exact_text`); 0:
    always the index (`store.exact_search_below` in the settings)."""

    def __init__(self, *, batch_size: int = 500, schema: GraphSchema = SCHEMA) -> None:
        self.batch_size = batch_size
        self.schema = schema
        self.read_only = False
        """When True every write (statement, unit, schema change) raises ReadOnlyViolation: retrieval and
        servers run this way, so a query path that writes fails its tests."""
        self.recent_statements: deque[str] = deque(maxlen=RECENT_STATEMENTS)
        self.statement_counts: Counter[str] = Counter()
        """Calls per statement name (bounded by the number of statements)."""
        self._cache: dict[str, tuple[float, Any]] = {}
        self._cache_lock = threading.Lock()
        self.derived: dict[str, Any] = {}
        """Structures derived from this graph for retrieval (the walk index), kept with the store object."""
        self._write_depth = 0
        self._span = WriteSpan()
        self._stamp_pending = False
        self._stamp_lock = threading.RLock()

    def note_statement(self, name: str) -> None:
        self.recent_statements.append(name)
        self.statement_counts[name] += 1

    def check_writable(self, what: str) -> None:
        """Raise ReadOnlyViolation when this store was opened read-only."""
        if self.read_only:
            raise ReadOnlyViolation(f"{what} would write to the graph, but this store is read-only",
                                    hint="retrieval only reads; writes belong to ingest and enrich steps")

    # -- the write stamp -------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[WriteSpan]:
        """A span of writes that replaces the graph's stamp (`meta_stamp_get`) once before its first write and once
        after its last: whatever was derived from the graph before the span, or while it ran, stops matching it.
        Spans nest (only the outermost stamps; inner ones yield its `WriteSpan`); every write through this store
        is in one."""
        with self._stamp_lock:
            self._write_depth += 1
            if self._write_depth == 1:
                self._span = WriteSpan()
            span = self._span
        try:
            yield span
        finally:
            with self._stamp_lock:
                self._write_depth -= 1
                outermost = self._write_depth == 0
                done = outermost and self._stamp_pending
                if done:
                    self._stamp_pending = False
            if done:
                span.after, replaced = self._new_stamp()
                span.others = replaced != span.first
            if outermost:
                for callback in span.ended:
                    callback(span)

    def _before_write(self) -> None:
        """Inside `writing`: the first write of the span replaces the stamp first."""
        with self._stamp_lock:
            first = not self._stamp_pending
            self._stamp_pending = True
            span = self._span
        if first:
            span.first, span.before = self._new_stamp()

    def _new_stamp(self) -> tuple[str | None, str | None]:
        """Set a new random stamp: (the stamp set, None on a graph without its Meta node; the one it replaced)."""
        statement = self.statement("meta_stamp_set")
        self.note_statement("meta_stamp_set")
        stamp = secrets.token_hex(8)
        rows = self._execute(statement.text, {"id": META_ID, "stamp": stamp}, write=True)
        return (stamp, rows[0]["previous"]) if rows else (None, None)

    def restamp(self) -> None:
        """Give the graph a new write stamp without other writes (a graph written before stamps came in has none,
        so nothing derived from it could be told current)."""
        self.check_writable("a new write stamp")
        self._new_stamp()

    def stamp(self) -> str | None:
        """The graph's write stamp: changes with every write through a neoweave store (None on a graph without
        one: empty, or not written since stamps came in)."""
        rows = self.run("meta_stamp_get", {"id": META_ID})
        return rows[0]["stamp"] if rows else None

    def derived_directory(self, name: str) -> Path | None:
        """Where a structure derived from this graph may be saved (next to the store's own files), or None when
        the store has no local directory (a remote server): it is then kept in memory only."""
        return None

    def cached(self, key: str, seconds: float, compute: Callable[[], T]) -> T:
        """A value derived from this graph (collection statistics), kept on the store for `seconds`: caches
        live and die with the store object that owns the connection, not in module globals."""
        now = time.monotonic()
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None and now - hit[0] < seconds:
                return hit[1]
        value = compute()
        with self._cache_lock:
            self._cache[key] = (now, value)
        return value

    # -- execution -------------------------------------------------------------------------------
    @abstractmethod
    def _execute(self, cypher: str, params: Mapping[str, Any], *, write: bool, timeout: float | None = None
                 ) -> list[dict[str, Any]]:
        """Run one Cypher statement; rows as dicts of plain Python values. `timeout`: seconds the store may run
        a read before stopping it (`ReadTimeout`); None: no limit."""

    def _read(self, cypher: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One read statement, bounded by the budget of the request it serves (`store.read_limit`), if any."""
        return bounded_read(lambda timeout: self._execute(cypher, params, write=False, timeout=timeout))

    def statement(self, name: str) -> Statement:
        return registry.load(name, self.backend)

    def _checked(self, name: str, params: Mapping[str, Any] | None) -> tuple[Statement, dict[str, Any]]:
        """The named statement and a copy of `params`, checked to be exactly its declared parameters."""
        statement = self.statement(name)
        values = dict(params or {})
        statement.check_params(values)
        return statement, values

    def run(self, name: str, params: Mapping[str, Any] | None = None, *, write: bool = False
            ) -> list[dict[str, Any]]:
        """Run the named statement with exactly its declared parameters."""
        statement, params = self._checked(name, params)
        if not write:
            self.note_statement(name)
            exact = statement.exact_text is not None and self.searches_exactly(statement.vector_labels)
            return self._read(statement.exact_text if exact else statement.text, params)
        self.check_writable(f"statement {name}")
        with self.writing():
            self._before_write()
            self.note_statement(name)
            return self._execute(statement.text, params, write=True)

    def searches_exactly(self, labels: tuple[str, ...]) -> bool:
        """Whether a vector search of these labels compares every vector (`Statement.exact_text`): while each has
        at most `exact_search_below` nodes (counts kept `LABEL_SIZE_SECONDS`)."""
        if self.exact_search_below <= 0:
            return False
        sizes = self.cached("vector_label_sizes", LABEL_SIZE_SECONDS, lambda: {
            row["label"]: int(row["nodes"] or 0) for row in self._read(self.statement("vector_label_sizes").text, {})})
        return all(label in sizes and sizes[label] <= self.exact_search_below for label in labels)

    def run_bookkeeping(self, name: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a named statement that writes only bookkeeping properties of a Meta node
        (`graph_schema.BOOKKEEPING`): what the graph holds is unchanged, so the write stamp stays, and what was
        derived at it (the walk index, a finish record's idle skip) stays valid."""
        statement, params = self._checked(name, params)
        self.check_writable(f"statement {name}")
        self.note_statement(name)
        return self._execute(statement.text, params, write=True)

    def query(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False
              ) -> list[dict[str, Any]]:
        """Run a query a person typed (`neoweave cypher`, notebooks): read-only unless `write`."""
        if not write and looks_like_write(cypher):
            raise ReadOnlyViolation("this query writes to the graph; queries are read-only by default",
                                    hint="pass --write (CLI) or write=True to allow it")
        if not write:
            return self._read(cypher, dict(params or {}))
        self.check_writable("a writing query")
        with self.writing():
            self._before_write()
            return self._execute(cypher, dict(params or {}), write=True)

    @abstractmethod
    def unit(self) -> AbstractContextManager[WriteUnit]:
        """A unit of writes applied atomically: `with store.unit() as u: u.run(name, params)`.

        Neo4j: one transaction. FalkorDB: one MULTI/EXEC block. Statements in a unit cannot read each
        other's results; the unit is applied when the block exits without an exception.
        """

    def write_batches(self, name: str, rows: Iterable[Mapping[str, Any]], *,
                      params: Mapping[str, Any] | None = None, batch_size: int | None = None) -> int:
        """Send `rows` to an `UNWIND $rows` statement in batches; returns the number of rows sent."""
        sent = 0
        with self.writing():
            for batch in batched(rows, batch_size or self.batch_size):
                self.run(name, {**(params or {}), "rows": batch}, write=True)
                sent += len(batch)
        return sent

    def pages(self, name: str, size: int, cursor: str = "key", params: Mapping[str, Any] | None = None,
              start: Any = "") -> Iterator[list[dict[str, Any]]]:
        """Pages of a statement taking `$after` and `$limit`, in key order: each starts after the last `cursor` value
        of the one before (keyset paging: every page is an index range, not an offset counted from the start). A
        page may hold several rows per key (a node with its relationships); it ends at `size` keys. `params` are the
        statement's other parameters. A statement paging with `{{node_after}}` takes `cursor="cursor"` and
        `start=store.node_page_start`."""
        after = start
        while True:
            rows = self.run(name, {**(params or {}), "after": after, "limit": size})
            if not rows:
                return
            yield rows
            after = rows[-1][cursor]
            if len({row[cursor] for row in rows}) < size:
                return

    # -- search ----------------------------------------------------------------------------------
    def vector_search(self, index: str, embedding: list[float], k: int, *,
                      filter: Mapping[str, Any] | None = None, oversample: int = 4) -> list[Hit]:
        """Top-k nodes of a schema vector index by cosine similarity (score in [-1, 1], both backends)."""
        target = self.schema.vector_index(index)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        fetch_k = self._fetch_k(k, bool(filter), oversample)
        params = self._vector_params(target.name, target.label, target.property)
        rows = self.run("vector_search", {**params, "fetch_k": fetch_k, "k": k,
                                          "embedding": [float(x) for x in embedding],
                                          "filter": dict(filter or {})})
        return [Hit(r["id"], float(r["score"]), tuple(r["labels"]), strip_vectors(r["properties"]))
                for r in rows]

    def fulltext_search(self, index: str, text: str, k: int) -> list[Hit]:
        """BM25 top-k nodes of a schema full-text index for the words of `text` (any word may match)."""
        target = self.schema.fulltext_index(index)
        terms = fulltext_terms(text)
        if not terms:
            return []
        params = self._fulltext_params(target.name, target.label)
        rows = self.run("fulltext_search", {**params, "query": self._fulltext_query(terms), "k": k})
        return [Hit(r["id"], float(r["score"]), tuple(r["labels"]), strip_vectors(r["properties"]))
                for r in rows]

    def fulltext_query(self, text: str) -> str | None:
        """The backend's any-word query for the plain words of `text` (None when it has none), for statements
        that search a full-text index with `{{fulltext_nodes ...}}`."""
        terms = fulltext_terms(text)
        return self._fulltext_query(terms) if terms else None

    def _fetch_k(self, k: int, filtered: bool, oversample: int) -> int:
        """Neighbours to ask the index for: more than k when a filter will drop some, and never fewer than the
        search breadth that finds an updated index's true neighbours (`VECTOR_SEARCH_BREADTH`)."""
        return max(k * oversample if filtered else k, VECTOR_SEARCH_BREADTH)

    @abstractmethod
    def _vector_params(self, index: str, label: str, prop: str) -> dict[str, Any]: ...

    @abstractmethod
    def _fulltext_params(self, index: str, label: str) -> dict[str, Any]: ...

    @abstractmethod
    def _fulltext_query(self, terms: list[str]) -> str: ...

    # -- schema and meta -------------------------------------------------------------------------
    @abstractmethod
    def ddl(self, dimension: int) -> list[DdlStep]:
        """This backend's schema DDL."""

    @abstractmethod
    def _apply_step(self, step: DdlStep) -> bool:
        """Apply one DDL step; False when it already existed."""

    def read_meta(self) -> dict[str, Any] | None:
        rows = self.run("meta_get", {"id": META_ID})
        return rows[0] if rows else None

    def check_meta(self, embedding_model: str, dimension: int) -> dict[str, Any] | None:
        """Fail if the graph was built with another schema version, model or dimension."""
        meta = self.read_meta()
        if meta is None:
            return None
        if meta["dimension"] != dimension or meta["embedding_model"] != embedding_model:
            raise SchemaMismatch(
                f"this graph was built with embedding model '{meta['embedding_model']}' "
                f"(dimension {meta['dimension']}), but the configuration asks for '{embedding_model}' "
                f"(dimension {dimension}); vectors from different models cannot be mixed",
                hint="set embedding.model back, or use another graph/data directory and re-ingest",
            )
        if meta["schema_version"] > SCHEMA_VERSION:
            raise SchemaMismatch(
                f"this graph has schema version {meta['schema_version']}, newer than this neoweave "
                f"({SCHEMA_VERSION})", hint="upgrade neoweave")
        return meta

    def apply_schema(self, embedding_model: str, dimension: int) -> list[str]:
        """Create every constraint and index (idempotent) and record the Meta node.

        Returns the names of the steps that created something new.
        """
        self.check_writable("applying the schema")
        meta = self.check_meta(embedding_model, dimension)
        created = [step.name for step in self.ddl(dimension) if self._apply_step(step)]
        if meta is not None:
            upgrade(self, int(meta["schema_version"]))
        if created or meta is None or meta["schema_version"] != SCHEMA_VERSION:
            # only then: an unchanged Meta rewritten would replace the write stamp, and every `enrich` run
            # would seem to have changed the graph (its graph-wide phases could never be skipped)
            self.run("meta_set", {"id": META_ID, "schema_version": SCHEMA_VERSION,
                                  "embedding_model": embedding_model, "dimension": dimension,
                                  "now": now_iso()}, write=True)
        return created

    def upgrade_schema(self) -> list[str]:
        """Create the constraints and indexes a graph built by an older neoweave lacks (a new step's vector
        index), with the embedding model it records; nothing on an empty graph. Returns the steps that created
        something."""
        meta = self.read_meta()
        if meta is None:
            return []
        return self.apply_schema(meta["embedding_model"], int(meta["dimension"]))

    # -- inspection ------------------------------------------------------------------------------
    def refresh_vector_indexes(self, labels: list[str] | tuple[str, ...], force: bool = False) -> list[str]:
        """Make the vector indexes of `labels` exact again after bulk property updates (names of those
        rebuilt; `force` rebuilds them however few updates they absorbed). Nothing to do on Neo4j; FalkorDB
        overrides it."""
        return []

    def counts(self) -> Counts:
        nodes = {r["label"]: int(r["count"]) for r in self.run("count_nodes_by_label")}
        rels = {r["type"]: int(r["count"]) for r in self.run("count_relationships_by_type")}
        return Counts(nodes, rels)

    def indexes(self) -> list[dict[str, Any]]:
        return self.run("list_indexes")

    def constraints(self) -> list[dict[str, Any]]:
        return self.run("list_constraints")

    def consistent_reads(self) -> AbstractContextManager[None]:
        """Statements read inside see one state of the graph between write units (`store.snapshot_gate`). The
        embedded FalkorDB gates its data directory's readers and writers; elsewhere each statement reads what is
        committed when it runs."""
        return nullcontext()

    @abstractmethod
    def health(self) -> dict[str, Any]:
        """Backend, address and whether it answers."""

    @abstractmethod
    def close(self) -> None: ...

    def server_pid(self) -> int | None:
        """The local server process this store started (embedded FalkorDB), for resource measurements."""
        return None

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
