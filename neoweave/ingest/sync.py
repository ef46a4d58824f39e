"""Mirror a file or folder into the graph (`neoweave sync PATH`): add new documents, update changed ones, delete
the ones that are gone, leave the rest alone.

"Read earlier from PATH" is decided by the `path` every Document node records (the resolved file it was read
from: `sources.iter_documents` resolves the root, so relative paths, symlinks and trailing slashes all give one
key). A document is deleted when its recorded file lies in PATH but this read did not produce its id: the
file is gone, no longer read (type, skip rules), or (JSONL/JSON) no longer holds the record. Nothing is
deleted for a file that exists but could not be read this time (binary, too large, a malformed line): those
documents are kept and reported, so a transient read error never costs derived facts.

One read serves both the pipeline and the decision: the reader notes every document it hands the ingest
pipeline (which skips unchanged content by hash as always), and deletions go through `GraphWriter.
delete_documents`, the path `neoweave delete` uses, which forgets every derived fact of the deleted chunks
(`store.provenance.forget_chunks`). Deletions run after the ingest, so an id that moved from one file to another
is never deleted, and a failed ingest deletes nothing.

Derived layers (enrich steps) are not re-run here; the report names the ones now stale and the command that
brings each up to date (see `derived_layers` for why).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from neoweave.errors import NeoweaveError
from neoweave.ingest.documents import Document, Skipped, Unchanged
from neoweave.ingest.pipeline import IngestOptions, Ingestor, IngestReport
from neoweave.ingest.sources import SourceOptions, SourceStats, StoredHash, iter_documents, unreadable_path
from neoweave.ingest.writer import GraphWriter
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

_CHUNK_STEP_ORDER = ("kg", "tags", "rst")
"""Chunk steps in the order their next-step commands are printed (others follow by name, communities last:
it partitions the relations kg writes)."""
_LIST_ITEM = re.compile(r"\[\d+\]$")  # `file.json[3]`: a record of a JSON list


@dataclass(frozen=True)
class SyncedDocument:
    """One document sync added, updated, deleted or kept: its id and the file it was (or is) read from."""

    id: str
    path: str
    source: str = ""
    """Where this read found it (file, and line for records); empty for deleted or kept documents."""
    reason: str = ""
    """Why a document that is no longer read was kept (its file could not be read this time)."""


@dataclass(frozen=True)
class DerivedLayer:
    """An enrich step that has run on this graph, and whether sync left it behind the documents."""

    step: str
    method: str
    """The method most of its work was done with (what the next run should use)."""
    done: int
    """Chunks the step processed (communities: how many communities exist)."""
    pending: int
    """Chunks it has not processed: written since it last ran (0 for communities)."""
    stale: bool

    @property
    def command(self) -> str:
        return f"neoweave enrich {self.step} --method {self.method}"


@dataclass
class SyncReport:
    path: str
    """The resolved file or folder that was mirrored."""
    dry_run: bool = False
    added: list[SyncedDocument] = field(default_factory=list)
    """Documents not read from PATH before (new ones; also an id stored from another path that PATH now holds)."""
    updated: list[SyncedDocument] = field(default_factory=list)
    deleted: list[SyncedDocument] = field(default_factory=list)
    unchanged: int = 0
    kept: list[SyncedDocument] = field(default_factory=list)
    """No longer read, but kept: their file exists and could not be read this time (see `skipped`)."""
    skipped: list[Skipped] = field(default_factory=list)
    unattributed: int = 0
    """Documents in the graph that record no source file (records ingested from memory): never synced."""
    layers: list[DerivedLayer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files_seen: int = 0
    files_ignored: int = 0
    ingest: IngestReport | None = None
    """The ingest pipeline's own report (None for a dry run)."""
    seconds: float = 0.0

    @property
    def next_steps(self) -> list[str]:
        """Commands that bring the derived layers this sync left stale up to date, in the order to run them."""
        return [layer.command for layer in self.layers if layer.stale]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "dry_run": self.dry_run,
            "added": len(self.added), "updated": len(self.updated), "deleted": len(self.deleted),
            "unchanged": self.unchanged, "kept": len(self.kept), "skipped": [str(s) for s in self.skipped],
            "unattributed": self.unattributed,
            "documents": {name: [asdict(d) for d in getattr(self, name)]
                          for name in ("added", "updated", "deleted", "kept")},
            "layers": [{**asdict(layer), "command": layer.command} for layer in self.layers],
            "next_steps": self.next_steps, "warnings": self.warnings,
            "files_seen": self.files_seen, "files_ignored": self.files_ignored,
            "ingest": self.ingest.as_dict() if self.ingest else None, "seconds": round(self.seconds, 3),
        }


def resolve_sync_path(path: str | Path) -> Path:
    """The absolute, symlink-free path documents record, or an error naming the path when it does not exist.

    A missing PATH is refused before anything is read: mirroring "nothing" would delete every document read
    from it (a typo, an unmounted disk)."""
    given = Path(path).expanduser()
    absolute = given if given.is_absolute() else Path.cwd() / given
    shown = str(path) if str(path) == str(absolute) else f"{path} ({absolute})"
    if (problem := unreadable_path(given, shown)) is not None:
        raise NeoweaveError(f"sync path {problem}; nothing was changed",
                            hint="check the path; to remove the documents read from a path that is gone, run "
                                 "`neoweave delete PATH`")
    return given.resolve()


@dataclass(frozen=True)
class _Read:
    path: str
    source: str
    content_hash: str


class _Reader:
    """The documents of PATH, as the ingest pipeline reads them, noting what it yields.

    Called by the pipeline's parse thread (a real run) or iterated alone (a dry run); its notes are read once the
    iteration has finished. It mirrors the pipeline's own choices: the first document with an id wins, and a
    document without text is not ingested."""

    def __init__(self, root: Path, sources: SourceOptions, hash_settings: dict[str, dict],
                 stored_hash: StoredHash | None = None) -> None:
        self.root = root
        self.sources = sources
        self.hash_settings = hash_settings
        self.stored_hash = stored_hash
        self.documents: dict[str, _Read] = {}
        """Documents with text, by id (first occurrence), in read order."""
        self.first_source: dict[str, str] = {}
        self.skipped: list[Skipped] = []
        self.unreadable: dict[str, str] = {}
        """File -> the first reason an input of it could not be read."""
        self.stats = SourceStats()

    def __call__(self, stats: SourceStats) -> Iterator[Document | Unchanged | Skipped]:
        self.stats = stats
        for item in iter_documents(self.root, self.sources, self.hash_settings, stats, self.stored_hash):
            self._note(item)
            yield item

    def read(self, progress: bool) -> None:
        """Read everything without ingesting (a dry run)."""
        stats = SourceStats()
        with tqdm(desc="read", unit="B", unit_scale=True, disable=not progress) as bar:
            for _ in self(stats):  # bytes of the files against their total size (known after the first item)
                bar.total = stats.bytes_total
                bar.update(max(0, stats.bytes_read - bar.n))

    def _note(self, item: Document | Unchanged | Skipped) -> None:
        if isinstance(item, Skipped):
            self.skipped.append(item)
            self.unreadable.setdefault(_LIST_ITEM.sub("", item.source), item.reason)
            return
        if item.id in self.first_source:
            self.skipped.append(Skipped(item.source, f"duplicate document id {item.id!r} "
                                                     f"(first seen in {self.first_source[item.id]})"))
            return
        self.first_source[item.id] = item.source
        if isinstance(item, Unchanged):  # stored with this hash, so it had text
            self.documents[item.id] = _Read(item.path, item.source, item.content_hash)
            return
        if not any(section.text.strip() for section in item.sections):  # the chunker makes no chunk of it
            self.skipped.append(Skipped(item.source, "no text to index"))
            return
        self.documents[item.id] = _Read(item.path, item.source, item.content_hash)


class _SyncIngestor(Ingestor):
    """The ingest pipeline fed by the sync's reader instead of its own walk (same parse, hash check, writes).
    The vector indexes are rebuilt once by `sync`, after its deletions too (FalkorDB: drop and re-create)."""

    refresh_indexes = False

    def hash_settings(self) -> dict[str, dict]:
        return self._hash_settings()

    def ingest_from(self, reader: _Reader) -> IngestReport:
        return self._ingest(reader)


def sync(store: GraphStore, embedder: TextEmbedder, path: str | Path, options: IngestOptions | None = None, *,
         dry_run: bool = False, allow_empty: bool = False) -> SyncReport:
    """Make the documents read from `path` (a file or folder) what ingesting it from scratch would give.

    `dry_run` reads and compares only (nothing is embedded or written). With `allow_empty` False, a PATH that
    now yields no document while documents were read from it before is refused rather than emptied (a real
    run raises; a dry run warns)."""
    started = time.perf_counter()
    options = options or IngestOptions()
    root = resolve_sync_path(path)
    where = str(root)
    folder = where if where.endswith(os.sep) else where + os.sep
    before = {row["id"]: row for row in store.run("documents_under_path", {"path": where, "folder": folder})}
    ingestor = _SyncIngestor(store, embedder, options)
    reader = _Reader(root, options.sources, ingestor.hash_settings(), ingestor.stored_hash)
    report = SyncReport(where, dry_run=dry_run)
    refresh = False
    if dry_run:
        reader.read(options.progress)
    else:
        report.ingest = ingestor.ingest_from(reader)
        refresh = report.ingest.documents_changed > 0
    try:
        _plan(report, reader, before)
        report.skipped = reader.skipped
        report.files_seen, report.files_ignored = reader.stats.files_seen, reader.stats.files_ignored
        if report.deleted and not reader.documents and not allow_empty:
            message = (f"{where} yields no document now, but {len(report.deleted)} document(s) were read from it "
                       "before: refusing to delete them all")
            hint = ("check the path (an empty or unmounted folder?); to delete them, pass --allow-empty "
                    "(allow_empty=True) or run `neoweave delete PATH`")
            if not dry_run:
                raise NeoweaveError(message, hint=hint)
            report.warnings.append(f"{message} ({hint})")
        if report.deleted and not dry_run:
            log.info("sync %s: deleting %d documents no longer there", where, len(report.deleted))
            refresh = True
            GraphWriter(store, embedder).delete_documents([doc.id for doc in report.deleted], refresh_indexes=False)
    finally:
        if refresh:  # once for the updates and the deletions
            store.refresh_vector_indexes(("Chunk", "Entity"))
    report.layers = derived_layers(store, changed=bool(report.added or report.updated or report.deleted))
    report.unattributed = int(store.run("documents_without_path")[0]["documents"])
    report.seconds = time.perf_counter() - started
    log.info("sync %s%s: %d added, %d updated, %d deleted, %d unchanged, %d kept", where,
             " (dry run)" if dry_run else "", len(report.added), len(report.updated), len(report.deleted),
             report.unchanged, len(report.kept))
    return report


def _plan(report: SyncReport, reader: _Reader, before: dict[str, dict[str, Any]]) -> None:
    """Sort what was read against what PATH held before: added, updated, unchanged, deleted, kept."""
    for doc_id, read in reader.documents.items():
        stored = before.get(doc_id)
        if stored is None:
            report.added.append(SyncedDocument(doc_id, read.path, read.source))
        elif stored["content_hash"] != read.content_hash:
            report.updated.append(SyncedDocument(doc_id, read.path, read.source))
        else:
            report.unchanged += 1
    for doc_id, stored in before.items():
        if doc_id in reader.documents:
            continue
        stored_path = stored["path"] or ""
        if stored_path in reader.unreadable:
            reason = f"its file could not be read this time: {reader.unreadable[stored_path]}"
            report.kept.append(SyncedDocument(doc_id, stored_path, reason=reason))
        else:
            report.deleted.append(SyncedDocument(doc_id, stored_path))


def derived_layers(store: GraphStore, *, changed: bool) -> list[DerivedLayer]:
    """The enrich steps that have run on this graph (the signatures chunks carry; communities that exist), each
    marked stale when it has pending chunks or the documents `changed`.

    Sync names the commands rather than running them: the graph records each step's method and model but not
    the parameters it ran with (`-P entity_types=...`), an llm method would start a model and spend tokens
    unasked, and `neoweave enrich` is already incremental (it processes only the chunks sync wrote, then
    redoes its graph-wide phases), so the printed command costs what the change costs."""
    total = 0
    steps: dict[str, Counter[str]] = {}
    communities: Counter[str] = Counter()
    for row in store.run("derived_layer_state"):
        kind, name, count = row["kind"], row["name"] or "", int(row["count"] or 0)
        if kind == "chunks":
            total = count
        elif kind == "communities":
            communities[name or "fast"] += count
        elif kind == "signature" and "@" in name:
            step, _, rest = name.partition("@")
            parts = rest.split(":")
            steps.setdefault(step, Counter())[parts[1] if len(parts) > 1 and parts[1] else "fast"] += count
    order = {step: index for index, step in enumerate(_CHUNK_STEP_ORDER)}
    layers = []
    for step in sorted(steps, key=lambda s: (order.get(s, len(order)), s)):
        done = sum(steps[step].values())
        pending = max(total - done, 0)
        layers.append(DerivedLayer(step, steps[step].most_common(1)[0][0], done, pending, pending > 0 or changed))
    if communities:
        stale = changed or any(layer.stale for layer in layers if layer.step == "kg")
        layers.append(DerivedLayer("communities", communities.most_common(1)[0][0], sum(communities.values()), 0,
                                   stale))
    return layers
