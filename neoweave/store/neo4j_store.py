"""GraphStore on Neo4j (5.x LTS and 2025.x), the production home. No APOC or GDS needed."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import neo4j
from neo4j import GraphDatabase
from neo4j import exceptions as neo4j_errors

from neoweave.errors import NeoweaveError, ReadOnlyViolation, ReadTimeout, StoreUnavailable
from neoweave.graph_schema.render import DdlStep, render_ddl
from neoweave.store.base import GraphStore, WriteUnit
from neoweave.store.values import strip_vectors

log = logging.getLogger(__name__)


def _plain(value: Any) -> Any:
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        return {"labels": sorted(value.labels), "properties": strip_vectors(dict(value))}
    if isinstance(value, Relationship):
        return {"type": value.type, "properties": strip_vectors(dict(value))}
    if isinstance(value, Path):
        return {"nodes": [_plain(n) for n in value.nodes],
                "relationships": [_plain(r) for r in value.relationships]}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "iso_format"):  # neo4j.time types
        return value.iso_format()
    return value


class Neo4jStore(GraphStore):
    backend = "neo4j"

    def __init__(self, *, uri: str, user: str, password: str, database: str = "neo4j",
                 batch_size: int = 500) -> None:
        super().__init__(batch_size=batch_size)
        self.uri = uri
        self.database = database
        try:
            self._driver = GraphDatabase.driver(uri, auth=(user, password), connection_timeout=10)
        except (ValueError, neo4j_errors.ConfigurationError) as exc:
            raise StoreUnavailable(f"bad Neo4j URI {uri!r}: {exc}", hint="check neo4j.uri") from exc
        self._verified = False

    def _verify(self) -> None:
        """Fail fast with a clear message instead of the driver's half-minute of retries."""
        if self._verified:
            return
        try:
            self._driver.verify_connectivity()
        except neo4j_errors.AuthError as exc:
            raise StoreUnavailable(f"Neo4j at {self.uri} refused the credentials",
                                   hint="set NEOWEAVE_NEO4J_USER / NEOWEAVE_NEO4J_PASSWORD") from exc
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.DriverError, OSError) as exc:
            raise StoreUnavailable(f"Neo4j at {self.uri} is unreachable: {exc}",
                                   hint="is the server up? see docker/README.md") from exc
        self._verified = True

    def _execute(self, cypher: str, params: Mapping[str, Any], *, write: bool, timeout: float | None = None
                 ) -> list[dict[str, Any]]:
        """`timeout`: a read runs in a transaction with that timeout, which the server stops (terminates) at it."""
        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            result = tx.run(cypher, dict(params))
            return [{k: _plain(v) for k, v in record.items()} for record in result]

        if timeout is not None and not write:
            work = neo4j.unit_of_work(timeout=timeout)(work)
        self._verify()
        try:
            with self._driver.session(database=self.database) as session:
                return session.execute_write(work) if write else session.execute_read(work)
        except neo4j_errors.ServiceUnavailable as exc:
            raise StoreUnavailable(f"Neo4j at {self.uri} is unreachable: {exc}",
                                   hint="is the server up? see docker/README.md") from exc
        except neo4j_errors.AuthError as exc:
            raise StoreUnavailable(f"Neo4j at {self.uri} refused the credentials",
                                   hint="set NEOWEAVE_NEO4J_USER / NEOWEAVE_NEO4J_PASSWORD") from exc
        except neo4j_errors.ClientError as exc:
            if timeout is not None and not write and exc.code and "TransactionTimedOut" in exc.code:
                raise ReadTimeout(f"Neo4j stopped the query at its {timeout:g} s transaction timeout") from exc
            if exc.code and "AccessMode" in exc.code:
                raise ReadOnlyViolation("this query writes to the graph but was run read-only",
                                        hint="pass --write (CLI) or write=True") from exc
            raise NeoweaveError(f"Neo4j rejected the query: {exc.message}") from exc

    @contextmanager
    def unit(self) -> Iterator[WriteUnit]:
        """One explicit transaction: everything in it commits together or not at all."""
        unit = WriteUnit(self)
        yield unit
        if not unit.queued:
            return
        self._verify()

        def work(tx: neo4j.ManagedTransaction) -> None:
            for text, params in unit.queued:
                tx.run(text, params).consume()

        try:
            with self.writing(), self._driver.session(database=self.database) as session:
                self._before_write()
                session.execute_write(work)
        except neo4j_errors.Neo4jError as exc:
            raise NeoweaveError(f"Neo4j rejected a write unit: {exc.message}") from exc

    def _vector_params(self, index: str, label: str, prop: str) -> dict[str, Any]:
        return {"index": index}

    def _fulltext_params(self, index: str, label: str) -> dict[str, Any]:
        return {"index": index}

    def _fulltext_query(self, terms: list[str]) -> str:
        return " ".join(terms)  # Lucene's default operator is OR

    def ddl(self, dimension: int) -> list[DdlStep]:
        return render_ddl("neo4j", dimension)

    def _apply_step(self, step: DdlStep) -> bool:
        self._verify()
        with self._driver.session(database=self.database) as session:
            summary = session.run(step.cypher).consume()
        counters = summary.counters
        return bool(counters.indexes_added or counters.constraints_added)

    def apply_schema(self, embedding_model: str, dimension: int) -> list[str]:
        created = super().apply_schema(embedding_model, dimension)
        self.run("await_indexes", write=True)
        return created

    def health(self) -> dict[str, Any]:
        try:
            ok = self.run("ping")[0]["ok"] == 1
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, NeoweaveError):
            ok = False
        return {"backend": "neo4j", "address": self.uri, "database": self.database, "ok": ok}

    def close(self) -> None:
        self._driver.close()
