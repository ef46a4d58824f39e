"""Readers see snapshots (issue 74): a retrieval served while `ingest` and `enrich kg` write sees the graph as it
was between two write units, never a half state.

The commands run twice on the same linked pages. First on one graph with every LLM-free strategy's retrievals
recorded after each write unit (and each single write statement) lands; then on a second graph while another
knowledge base on it (its own connection and gate, as `serve` in another process has) polls the same retrievals
without pause: every poll must equal what the first run recorded at some unit boundary. Real store, embedding
model and files. (On these three pages a read left ungated also passes: a unit seldom lands between the
statements of one retrieval and changes what they read; tests/test_snapshot_gate.py checks the gate itself.)"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_servable_states import write_site

from neoweave.errors import NeoweaveError
from neoweave.kb import KnowledgeBase
from neoweave.registry import llm_free_strategies
from neoweave.store.falkordb_store import FalkorDBStore

QUESTIONS = ("What cools the alpha reactor?", "Which console shows the coolant temperature?")
READS_THE_GRAPH = {"ppr": {"walk_index": "store"}}
"""ppr reads the graph, not its walk index files, which are built after a command and not by write units."""
READ_DELAY = 0.01
"""Seconds each read statement of the readers takes longer."""
WRITE_PAUSE = 0.05
"""Seconds the writer of the second run waits after each write."""


def _strategies() -> list[tuple[str, dict[str, Any]]]:
    return [(name, {**parameters, **READS_THE_GRAPH.get(name, {})})
            for name, parameters in llm_free_strategies().items()]


def _outcome(reader: KnowledgeBase, name: str, parameters: dict[str, Any], question: str) -> tuple:
    """What a client gets: the passages and facts in order, or the kind of error a state gives (an empty graph,
    a step not run yet)."""
    try:
        result = reader.retrieve(question, name, 3, **parameters)
    except NeoweaveError as exc:
        return ("refused", str(exc).split(":")[0])
    return (tuple(item.chunk_id for item in result.items),
            tuple((fact.source_id, fact.relation, fact.target_id) for fact in result.facts))


def _commands(kb: KnowledgeBase, folder: Path) -> None:
    kb.ingest(folder)
    kb.enrich("kg")


def _reader(kb: KnowledgeBase, server, embedder) -> KnowledgeBase:
    """Another knowledge base on the graph, read-only, whose statements take a little longer (a larger graph's
    would): a write unit has time to land between two statements of a retrieval, where an ungated read meets it."""
    store = FalkorDBStore(server=server, graph=kb.store.graph_name)
    execute = store._execute

    def slower(*args: Any, **kwargs: Any) -> Any:
        rows = execute(*args, **kwargs)
        if not kwargs.get("write"):
            time.sleep(READ_DELAY)
        return rows

    store._execute = slower
    return KnowledgeBase(kb.settings, store=store, embedder=embedder, read_only=True)


@contextlib.contextmanager
def _after_each_write(store: FalkorDBStore, action: Callable[[], None]) -> Iterator[None]:
    """`action` run each time an outermost write unit or statement has left the store's gate
    (`store.snapshot_gate`), while the block runs."""
    gate = store._snapshot_gate
    writing = gate.writing

    @contextlib.contextmanager
    def writing_then_action() -> Iterator[None]:
        outermost = not getattr(gate._local, "writes", 0)
        with writing():
            yield
        if outermost:
            action()

    gate.writing = writing_then_action
    try:
        yield
    finally:
        gate.writing = writing


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return write_site(tmp_path / "site")


def test_reads_during_ingest_and_enrich_see_a_state_between_write_units(kb, second_store, falkordb_server, embedder,
                                                                      site):
    from neoweave.config import load_settings

    strategies = _strategies()
    assert {"naive", "larag", "kg", "ppr", "hybrid"} <= {name for name, _ in strategies}
    recorded: dict[tuple[str, str], set[tuple]] = {(name, q): set() for name, _ in strategies for q in QUESTIONS}
    boundaries = 0

    # first run: a record after every write that lands
    with _reader(kb, falkordb_server, embedder) as reader:
        def record() -> None:
            nonlocal boundaries
            boundaries += 1
            for name, parameters in strategies:
                for question in QUESTIONS:
                    recorded[(name, question)].add(_outcome(reader, name, parameters, question))

        record()  # before the first write
        with _after_each_write(kb.store, record):
            _commands(kb, site)
    assert boundaries > 10

    # second run, on another graph, polled while it writes
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": kb.settings.falkordb.data_dir}})
    polls: list[tuple[tuple[str, str], tuple]] = []
    failures: list[str] = []
    writing = threading.Event()
    with KnowledgeBase(settings, store=second_store, embedder=embedder) as writer, \
            _reader(writer, falkordb_server, embedder) as reader:
        def run_commands() -> None:
            try:
                _commands(writer, site)
            except BaseException as exc:  # the finding, reported below
                failures.append(f"the commands failed: {exc!r}")
            finally:
                writing.clear()

        # readers get their turn between units, as between a larger graph's
        with _after_each_write(writer.store, lambda: time.sleep(WRITE_PAUSE)):
            writing.set()
            thread = threading.Thread(target=run_commands, daemon=True)
            thread.start()
            deadline = time.monotonic() + 300
            while writing.is_set() and time.monotonic() < deadline:
                for name, parameters in strategies:
                    for question in QUESTIONS:
                        polls.append(((name, question), _outcome(reader, name, parameters, question)))
            thread.join(timeout=60)
    assert not failures, failures
    assert len(polls) > 2 * len(recorded)
    unrecorded = [(key, outcome) for key, outcome in polls if outcome not in recorded[key]]
    assert not unrecorded, f"{len(unrecorded)} of {len(polls)} polls saw a state no unit boundary had: {unrecorded[:3]}"
