"""Incremental equals rebuild: random sequences of ingest, change, delete and enrich on a small corpus, each
ending with the graph compared to one built from scratch from the final corpus.

A sequence works on a folder of HTML pages (one per document, a few versions of each: shorter, longer, with a
link to another page) through a `KnowledgeBase`: write some pages and ingest the folder, remove a page and
delete its document, change the folder (pages written and removed) and sync it, run an enrich step (fast
methods). It ends by bringing every step it ran up to date (in
the canonical order kg, communities, tags, rst), the point at which a user expects the graph to be what a
rebuild gives. The rebuild ingests the final folder into an empty graph and runs the same steps once. The two
graphs are compared by `neoweave.audit.snapshot.diff`. `tests/test_rebuild_check.py` runs a few dozen sequences
in CI; `benchmarks/rebuild_check.py` runs hundreds, some with kill -9 of a command at a random moment.
"""

from __future__ import annotations

import html
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neoweave.audit.snapshot import Snapshot, diff, snapshot

log = logging.getLogger(__name__)

STEPS = ("kg", "communities", "tags", "rst")
"""Enrich steps a sequence may run, in the order the catch-up and the rebuild run them."""


@dataclass(frozen=True)
class Page:
    """One document of the corpus: its file name and its versions (HTML)."""

    name: str
    versions: tuple[str, ...]


def sample_records(corpus: Path, qa: Path, *, questions: int = 4) -> list[dict[str, Any]]:
    """The gold pages of the first `questions` of a QA set (`{"evidence": [titles]}` over a corpus of
    `{"title", "text"}` records): pages that share entities, so merges, relations across documents and
    communities happen."""
    import json

    by_title = {r["title"]: r for r in map(json.loads, corpus.open(encoding="utf-8"))}
    chosen: list[dict[str, Any]] = []
    for line in list(qa.open(encoding="utf-8"))[:questions]:
        for title in json.loads(line)["evidence"]:
            if title in by_title and by_title[title] not in chosen:
                chosen.append(by_title[title])
    return chosen


def _html(title: str, paragraphs: Sequence[str], link: tuple[str, str] | None) -> str:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    if link:
        body += f'<p>See also <a href="{html.escape(link[0])}">{html.escape(link[1])}</a>.</p>'
    return (f"<html><head><title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>"
            f"{body}</body></html>")


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in text.replace("\n", " ").split(". ") if p.strip()]
    return [p if p.endswith(".") else p + "." for p in parts]


def make_pages(records: Sequence[dict[str, Any]]) -> list[Page]:
    """Pages with three versions from records `{"title", "text"}`: the text; the text without its last
    sentence; the text with a sentence of the next record and a link to it (a cross-document fact and link)."""
    pages = []
    names = [f"page{index:02d}.html" for index in range(len(records))]
    for index, record in enumerate(records):
        other = records[(index + 1) % len(records)]
        sentences = _sentences(record["text"])
        borrowed = _sentences(other["text"])[:1]
        versions = (
            _html(record["title"], [" ".join(sentences)], None),
            _html(record["title"], [" ".join(sentences[:-1] or sentences)], None),
            _html(record["title"], [" ".join(sentences), " ".join(borrowed)],
                  (names[(index + 1) % len(records)], other["title"])),
        )
        pages.append(Page(names[index], versions))
    return pages


@dataclass
class Operation:
    kind: str  # ingest | remove | sync | enrich
    pages: dict[str, int] = field(default_factory=dict)  # ingest, sync: page name -> version written
    removed: tuple[str, ...] = ()  # remove, sync: page names whose files go
    step: str = ""  # enrich

    def __str__(self) -> str:
        if self.kind == "ingest":
            return "ingest " + ",".join(f"{name.removesuffix('.html')}v{v}" for name, v in sorted(self.pages.items()))
        if self.kind == "remove":
            return "remove " + ",".join(name.removesuffix(".html") for name in self.removed)
        if self.kind == "sync":
            return ("sync " + ",".join(f"{name.removesuffix('.html')}v{v}" for name, v in sorted(self.pages.items()))
                    + "".join(f" -{name.removesuffix('.html')}" for name in self.removed))
        return f"enrich {self.step}"


def random_sequence(rng: random.Random, pages: Sequence[Page], *, length: int) -> list[Operation]:
    """A sequence starting with an ingest, then `length - 1` random operations."""
    present: set[str] = set()
    operations: list[Operation] = []
    while len(operations) < length:
        roll = rng.random()
        if not operations or roll < 0.4:
            chosen = rng.sample(list(pages), rng.randint(1, max(1, len(pages) // 2)))
            op = Operation("ingest", {p.name: rng.randrange(len(p.versions)) for p in chosen})
            present |= set(op.pages)
        elif roll < 0.5 and present:
            name = rng.choice(sorted(present))
            present.discard(name)
            op = Operation("remove", removed=(name,))
        elif roll < 0.6:  # change the folder (files written and removed), then mirror it
            removed = tuple(rng.sample(sorted(present), rng.randint(0, min(2, len(present)))))
            written = rng.sample(list(pages), rng.randint(0, 2))
            op = Operation("sync", {p.name: rng.randrange(len(p.versions)) for p in written if p.name not in removed},
                           removed)
            present = (present - set(removed)) | set(op.pages)
        else:
            op = Operation("enrich", step=rng.choice(STEPS))
        operations.append(op)
    return operations


class Builder:
    """What a sequence does to a knowledge base; `apply` is replaced to run commands in a subprocess."""

    def __init__(self, kb: Any, folder: Path, pages: Sequence[Page],
                 parameters: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.kb = kb
        self.folder = folder
        self.pages = {p.name: p for p in pages}
        self.parameters = {step: dict(values) for step, values in (parameters or {}).items()}

    def enrich(self, step: str) -> None:
        self.kb.enrich(step, "fast", **self.parameters.get(step, {}))

    def apply(self, op: Operation) -> None:
        if op.kind == "ingest":
            for name, version in op.pages.items():
                (self.folder / name).write_text(self.pages[name].versions[version], encoding="utf-8")
            self.kb.ingest(self.folder)
        elif op.kind == "remove":
            for name in op.removed:
                path = self.folder / name
                path.unlink(missing_ok=True)
                self.kb.delete(str(path))
        elif op.kind == "sync":
            self._change_folder(op)
            self.kb.sync(self.folder, allow_empty=True)
        else:
            self.enrich(op.step)

    def _change_folder(self, op: Operation) -> None:
        for name in op.removed:
            (self.folder / name).unlink(missing_ok=True)
        for name, version in op.pages.items():
            (self.folder / name).write_text(self.pages[name].versions[version], encoding="utf-8")


class CommandBuilder(Builder):
    """The same operations as `neoweave` commands in a subprocess on the data directory `data_dir`; with
    `kill_rate` > 0 a command is killed (SIGKILL) at a random moment with that probability, and then run again
    to completion, as a user would after a crash."""

    def __init__(self, data_dir: Path, folder: Path, pages: Sequence[Page], rng: random.Random, *,
                 parameters: Mapping[str, Mapping[str, Any]] | None = None, kill_rate: float = 0.0,
                 max_delay: float = 8.0) -> None:
        super().__init__(None, folder, pages, parameters)
        self.data_dir = data_dir
        self.rng = rng
        self.kill_rate = kill_rate
        self.max_delay = max_delay
        self.kills = 0

    def _command(self, *args: str) -> None:
        argv = [sys.executable, "-m", "neoweave.cli", "--data-dir", str(self.data_dir), *args]
        env = {**os.environ, "NEOWEAVE_LOG_LEVEL": "WARNING"}
        killed = False
        if self.rng.random() < self.kill_rate:
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                       start_new_session=True)
            delay = self.rng.uniform(0.2, self.max_delay)
            deadline = time.monotonic() + delay
            while process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                self.kills += 1
                killed = True
            process.wait()
            if not killed and process.returncode in (0, 3):
                return
        result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        done_before = killed and args[0] == "delete" and "no document has" in result.stderr  # killed after it
        if result.returncode not in (0, 3) and not done_before:
            raise RuntimeError(f"neoweave {' '.join(args)} failed ({result.returncode}): {result.stderr[-2000:]}")

    def apply(self, op: Operation) -> None:
        if op.kind == "ingest":
            for name, version in op.pages.items():
                (self.folder / name).write_text(self.pages[name].versions[version], encoding="utf-8")
            self._command("ingest", str(self.folder), "--no-progress")
        elif op.kind == "remove":
            for name in op.removed:
                path = self.folder / name
                path.unlink(missing_ok=True)
                self._command("delete", str(path))
        elif op.kind == "sync":
            self._change_folder(op)
            self._command("sync", str(self.folder), "--allow-empty", "--no-progress")
        else:
            self.enrich(op.step)

    def enrich(self, step: str) -> None:
        options = [f"-P{name}={json.dumps(value)}" for name, value in self.parameters.get(step, {}).items()]
        self._command("enrich", step, "--method", "fast", "--no-progress", *options)


@dataclass
class Outcome:
    seed: int
    operations: list[str]
    differences: list[str]
    counts: dict[str, int]
    kills: int = 0
    merges: tuple[int, int] = (0, 0)
    """Merge decisions (EntityMerge records) in the incremental graph and the rebuild."""
    merges_differ: bool = False
    """The two graphs hold different merge decisions (a diagnosis of a difference: resolution is derived from the
    final mentions, so it is compared like the rest of the graph)."""

    @property
    def same(self) -> bool:
        return not self.differences


def graph_opener(server: Any, embedder: Any, data_dir: Path) -> Callable[[str], Any]:
    """`make_kb` for `run_sequence`: a knowledge base on a new graph of the embedded FalkorDB `server` (with a
    shared, loaded `embedder`), the graph deleted when it is closed."""
    import contextlib
    import uuid

    from neoweave.config import load_settings
    from neoweave.kb.knowledge_base import KnowledgeBase
    from neoweave.store.falkordb_store import FalkorDBStore

    @contextlib.contextmanager
    def opened(name: str) -> Any:
        store = FalkorDBStore(server=server, graph=f"rebuild_{name}_{uuid.uuid4().hex[:8]}")
        settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": data_dir}})
        try:
            with KnowledgeBase(settings, store=store, embedder=embedder) as kb:
                yield kb
        finally:
            with contextlib.suppress(Exception):  # the graph may never have been created
                store._graph_handle().delete()
            store.close()

    return opened


def steps_run(operations: Sequence[Operation]) -> list[str]:
    ran = {op.step for op in operations if op.kind == "enrich"}
    return [step for step in STEPS if step in ran]


def run_sequence(seed: int, pages: Sequence[Page], make_kb: Callable[[str], Any], workdir: Path, *,
                 length: int = 6, kill_rate: float = 0.0,
                 parameters: Mapping[str, Mapping[str, Any]] | None = None) -> Outcome:
    """Run one random sequence and its rebuild; `make_kb(name)` opens a knowledge base on an empty graph of
    its own (a context manager). With `kill_rate` > 0 the sequence runs as `neoweave` commands on a data
    directory of its own (under `workdir`), some killed with SIGKILL and rerun. `parameters` are enrich step
    parameters by step (`{"kg": {"resolve": False}}`).

    The whole graphs are compared, entity resolution included (its merges are derived from the final mentions,
    `enrich.resolution_derived`): `diff` leaves out only timestamps and compares vectors and floats within a
    tolerance; `merges_differ` says whether a difference involves the merge decisions."""
    rng = random.Random(seed)
    operations = random_sequence(rng, pages, length=length)
    folder = workdir / f"seq{seed}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    steps = steps_run(operations)
    kills = 0
    if kill_rate > 0:
        data_dir = workdir / f"seq{seed}-data"
        shutil.rmtree(data_dir, ignore_errors=True)
        commands = CommandBuilder(data_dir, folder, pages, random.Random(seed * 7919), parameters=parameters,
                                  kill_rate=kill_rate)
        try:
            for op in operations:
                commands.apply(op)
            for step in steps:
                commands.enrich(step)
            kills = commands.kills
            incremental = _read_data_dir(data_dir)
        finally:
            subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "server", "stop"],
                           capture_output=True)
            shutil.rmtree(data_dir, ignore_errors=True)
    else:
        with make_kb(f"inc{seed}") as kb:
            builder = Builder(kb, folder, pages, parameters)
            for op in operations:
                log.debug("seed %d: %s", seed, op)
                builder.apply(op)
            for step in steps:  # bring every derived layer up to date
                builder.enrich(step)
            incremental = snapshot(kb.store)
    # the rebuild reads the same folder (the final corpus) under the same paths, so document ids match
    with make_kb(f"reb{seed}") as kb:
        kb.store.apply_schema(kb.settings.embedding.model, kb.embedder.dimension)  # as ingest does
        if any(folder.iterdir()):
            kb.ingest(folder)
        rebuild = Builder(kb, folder, pages, parameters)
        for step in steps:
            rebuild.enrich(step)
        rebuilt = snapshot(kb.store)
    decisions = [_merge_decisions(incremental), _merge_decisions(rebuilt)]
    return Outcome(seed, [str(op) for op in operations], diff(incremental, rebuilt), rebuilt.counts(), kills,
                   (len(decisions[0]), len(decisions[1])), decisions[0] != decisions[1])


def _merge_decisions(shot: Snapshot) -> set[tuple[Any, Any, Any]]:
    return {(props.get("survivor_id"), props.get("absorbed_id"), props.get("status"))
            for (label, _), props in shot.nodes.items() if label == "EntityMerge"}


def _read_data_dir(data_dir: Path) -> Snapshot:
    from neoweave.kb.opening import open_kb

    with open_kb(data_dir, read_only=True) as kb:
        return snapshot(kb.store)
