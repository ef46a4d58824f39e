"""Graph stores behind one interface: Neo4j (production) and FalkorDB (embedded default)."""

from __future__ import annotations

from pathlib import Path

from neoweave.config import Settings
from neoweave.store.base import GraphStore
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.values import Counts, Hit

__all__ = ["Counts", "EmbeddedFalkorDB", "GraphStore", "Hit", "embedded_server", "open_store"]


def embedded_server(settings: Settings) -> EmbeddedFalkorDB:
    return EmbeddedFalkorDB(
        Path(settings.falkordb.data_dir),
        appendfsync=settings.falkordb.appendfsync,
        start_timeout=settings.falkordb.start_timeout,
        idle_timeout=settings.falkordb.idle_timeout,
        module=settings.falkordb.module,
    )


def open_store(settings: Settings) -> GraphStore:
    """The configured store. Connections open lazily; the embedded server starts on first use."""
    store = _open(settings)
    store.exact_search_below = settings.store.exact_search_below
    return store


def _open(settings: Settings) -> GraphStore:
    if settings.store.backend == "neo4j":
        from neoweave.store.neo4j_store import Neo4jStore

        return Neo4jStore(
            uri=settings.neo4j.uri,
            user=settings.neo4j.user,
            password=settings.neo4j.password.get_secret_value(),
            database=settings.neo4j.database,
            batch_size=settings.store.batch_size,
        )
    from neoweave.store.falkordb_store import FalkorDBStore

    return FalkorDBStore(
        server=embedded_server(settings),
        graph=settings.falkordb.graph,
        ef_runtime=settings.falkordb.ef_runtime,
        ef_construction=settings.falkordb.ef_construction,
        hnsw_m=settings.falkordb.hnsw_m,
        batch_size=settings.store.batch_size,
    )
