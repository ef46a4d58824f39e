"""The ingest pipeline: parse and chunk, embed, write, resolve links; each stage overlapping the next.

A parser thread reads and chunks documents into a bounded queue; the calling thread checks stored content
hashes (unchanged documents are never embedded) and embeds new or changed chunks in batches; a writer
thread writes each embedded batch as one unit. Bounded queues keep memory flat however large the corpus.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.ingest.chunking import DEFAULT_CHUNKING, Chunker, ChunkingOptions
from neoweave.ingest.documents import Document, Skipped, Unchanged
from neoweave.ingest.link_contexts import embed_all_link_contexts
from neoweave.ingest.records import record_to_document
from neoweave.ingest.sources import SourceOptions, SourceStats, iter_documents
from neoweave.ingest.writer import GraphWriter, LinkReport
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)
_DONE = object()


@dataclass
class IngestReport:
    documents_new: int = 0
    documents_changed: int = 0
    documents_unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    files_seen: int = 0
    files_ignored: int = 0
    sections: int = 0
    chunks: int = 0
    links_resolved: int = 0
    links_unresolved: int = 0
    self_links: int = 0
    link_contexts_embedded: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped"] = [str(s) for s in self.skipped]
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        return data


@dataclass(frozen=True)
class IngestOptions:
    sources: SourceOptions = field(default_factory=SourceOptions)
    chunk_size: int | None = None
    """Characters per chunk; None uses the per-format default (1000 for HTML/text/PDF/DOCX, 1200 for records)."""
    chunk_overlap: int | None = None
    embed_batch_chunks: int = 256
    """Chunks per embedding call (and per write unit)."""
    progress: bool = True

    def chunking(self, fmt: str) -> ChunkingOptions:
        default = DEFAULT_CHUNKING.get(fmt, DEFAULT_CHUNKING["text"])
        return ChunkingOptions(self.chunk_size or default.chunk_size,
                               self.chunk_overlap if self.chunk_overlap is not None else default.chunk_overlap)


def ingest_options(progress: bool, options: Mapping[str, Any], *, command: str) -> IngestOptions:
    """`IngestOptions` from flat keywords (`SourceOptions` and `IngestOptions` fields, as `kb.ingest` takes them);
    a bad name or value is a NeoweaveError naming it and the `command` it was given to."""
    source_fields = set(SourceOptions.__dataclass_fields__)
    ingest_fields = set(IngestOptions.__dataclass_fields__) - {"sources", "progress"}
    unknown = sorted(set(options) - source_fields - ingest_fields)
    if unknown:
        raise NeoweaveError(f"{command} has no option {unknown}; its options: "
                            f"{sorted(source_fields | ingest_fields)}")
    try:
        built = IngestOptions(sources=SourceOptions(**{k: v for k, v in options.items() if k in source_fields}),
                              progress=progress, **{k: v for k, v in options.items() if k in ingest_fields})
        for kind in ("html", "record"):
            built.chunking(kind)
    except (TypeError, ValueError) as exc:
        raise NeoweaveError(f"invalid {command} option: {exc}") from exc
    return built


def _lower_thread_priority() -> None:
    """Let embedding (the bottleneck) have the cores first: parsing and writing fill the gaps.

    Linux applies nice values per thread; elsewhere this is a no-op.
    """
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class _Progress:
    """tqdm bars for reading, embedding and writing (silent when disabled). Reading counts bytes of the files
    against their total size (known before the first is parsed; a JSONL file counts line by line), so it has an
    ETA, and parsing runs at most a few documents ahead of embedding (the bottleneck). The chunk bars' totals
    are the chunks parsed so far that need embedding: exact once reading is done, and from the start for one
    large file."""

    def __init__(self, enabled: bool, stats: SourceStats) -> None:
        self.enabled = enabled
        self.stats = stats
        self.documents = 0
        if enabled:
            from tqdm import tqdm

            self.read = tqdm(desc="read            ", unit="B", unit_scale=True, position=0, dynamic_ncols=True)
            self.embedded = tqdm(total=0, desc="embedded chunks ", unit="chunk", position=1, dynamic_ncols=True)
            self.written = tqdm(total=0, desc="written chunks  ", unit="chunk", position=2, dynamic_ncols=True)

    def parsed(self, documents: int = 1) -> None:
        """A document came out of parsing: move the read bar to the bytes read so far."""
        if not self.enabled:
            return
        if self.read.total is None and self.stats.bytes_total is not None:
            self.read.total = self.stats.bytes_total
        self.documents += documents
        self.read.set_postfix_str(f"{self.documents} documents", refresh=False)
        self.read.update(max(0, self.stats.bytes_read - self.read.n))

    def to_embed(self, chunks: int) -> None:
        """Chunks of new or changed documents: they will be embedded and written."""
        if self.enabled:
            for bar in (self.embedded, self.written):
                bar.total = (bar.total or 0) + chunks
                bar.refresh()

    def update(self, bar: str, n: int) -> None:
        if self.enabled:
            getattr(self, bar).update(n)

    def close(self) -> None:
        if self.enabled:
            if self.stats.bytes_total is not None:
                self.read.update(max(0, self.stats.bytes_read - self.read.n))
            for bar in (self.read, self.embedded, self.written):
                bar.close()


class Ingestor:
    """Ingest files into a store with one embedding model. Reusable across runs."""

    refresh_indexes: bool = True
    """Rebuild the vector indexes after changed documents (False: the caller does, once, after more changes)."""

    def __init__(self, store: GraphStore, embedder: TextEmbedder, options: IngestOptions | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.options = options or IngestOptions()
        self.writer = GraphWriter(store, embedder)

    def _hash_settings(self) -> dict[str, dict]:
        settings = {}
        for fmt in DEFAULT_CHUNKING:
            chunking = self.options.chunking(fmt)
            settings[fmt] = {"chunk_size": chunking.chunk_size, "chunk_overlap": chunking.chunk_overlap,
                             "embedding_model": self.embedder.model_name}
        return settings

    def ingest(self, path: str | Path) -> IngestReport:
        """Ingest a file or folder (HTML, JSON/JSONL records, text, Markdown, PDF, DOCX)."""
        return self._ingest(lambda stats: iter_documents(path, self.options.sources, self._hash_settings(), stats,
                                                         self.stored_hash))

    def stored_hash(self, doc_id: str) -> str | None:
        """The content hash stored for a document (None: not in the graph): files that match are not parsed."""
        return self.writer.stored_hashes([doc_id]).get(doc_id)

    def ingest_records(self, records: Iterable[Any], *, source: str) -> IngestReport:
        """Ingest records given in memory ({"id", "title", "text", "url", "metadata"}, as in a JSONL file), e.g.
        documents from a LangChain loader; `source` names where they came from in reports and on the nodes."""
        settings = self._hash_settings()["record"]

        def items(_stats: SourceStats) -> Iterator[Document | Skipped]:
            for number, record in enumerate(records, 1):
                yield record_to_document(record, source=source, line=number, settings=settings)

        return self._ingest(items)

    def _ingest(self, items: Callable[[SourceStats], Iterable[Document | Unchanged | Skipped]]) -> IngestReport:
        started = time.perf_counter()
        report = IngestReport()
        self.store.apply_schema(self.embedder.model_name, self.embedder.dimension)
        stats = SourceStats()
        progress = _Progress(self.options.progress, stats)
        parsed: queue.Queue = queue.Queue(maxsize=16)
        to_write: queue.Queue = queue.Queue(maxsize=2)
        failure: list[BaseException] = []
        stop = threading.Event()

        count_tokens = self.embedder.token_counter()

        def produce() -> None:
            _lower_thread_priority()
            chunkers = {fmt: Chunker(self.options.chunking(fmt)) for fmt in DEFAULT_CHUNKING}
            try:
                for item in items(stats):
                    if stop.is_set():
                        return
                    if isinstance(item, Document):
                        chunks = chunkers[item.format].chunk(item).chunks
                        for chunk, count in zip(chunks, count_tokens([c.text for c in chunks]), strict=True):
                            chunk.token_count = count
                    parsed.put(item)
            except BaseException as exc:
                failure.append(exc)
            finally:
                parsed.put(_DONE)

        def consume() -> None:
            _lower_thread_priority()
            try:
                while True:
                    item = to_write.get()
                    if item is _DONE:
                        return
                    docs, changed = item
                    if not failure:
                        self.writer.write_documents(docs, changed)
                        progress.update("written", sum(len(d.chunks) for d in docs))
            except BaseException as exc:
                failure.append(exc)
                stop.set()
                while to_write.get() is not _DONE:  # drain so the embedding loop never blocks
                    pass

        producer = threading.Thread(target=produce, name="neoweave-parse", daemon=True)
        writer = threading.Thread(target=consume, name="neoweave-write", daemon=True)
        producer.start()
        writer.start()
        try:
            for batch in self._batches(parsed, report, progress):
                if failure:
                    break
                self._embed_and_queue(batch, report, progress, to_write)
        finally:
            stop.set()
            to_write.put(_DONE)
            writer.join()
            while producer.is_alive():  # unblock a producer waiting on a full queue
                with contextlib.suppress(queue.Empty):
                    parsed.get(timeout=0.1)
            producer.join()
            progress.close()
        if failure:
            exc = failure[0]
            raise exc if isinstance(exc, NeoweaveError) else NeoweaveError(
                f"ingest failed: {type(exc).__name__}: {exc}") from exc

        wrote = report.documents_new + report.documents_changed
        links = self.writer.resolve_links(retry_unresolved=wrote > 0)
        self._add_links(report, links)
        # resolution embedded the contexts of the links it made; any still missing (older graphs) are embedded here
        report.link_contexts_embedded += embed_all_link_contexts(self.store, self.embedder,
                                                                 progress=self.options.progress)
        if report.documents_changed and self.refresh_indexes:  # rewritten chunks and forgotten entity facts
            self.store.refresh_vector_indexes(("Chunk", "Entity"))  # (see refresh_vector_indexes)
        report.files_seen, report.files_ignored = stats.files_seen, stats.files_ignored
        report.seconds = time.perf_counter() - started
        return report

    @staticmethod
    def _add_links(report: IngestReport, links: LinkReport) -> None:
        report.links_resolved += links.resolved
        report.links_unresolved += links.unresolved
        report.self_links += links.self_links
        report.link_contexts_embedded += links.contexts_embedded

    def _batches(self, parsed: queue.Queue, report: IngestReport, progress: _Progress
                 ) -> Iterator[tuple[list[Document], set[str]]]:
        """Batches of new or changed documents (about `embed_batch_chunks` chunks each)."""
        seen: dict[str, str] = {}
        pending: list[Document] = []
        pending_chunks = 0

        def flush() -> tuple[list[Document], set[str]] | None:
            nonlocal pending, pending_chunks
            if not pending:
                return None
            stored = self.writer.stored_hashes(d.id for d in pending)
            fresh = [d for d in pending if stored.get(d.id) != d.content_hash]
            report.documents_unchanged += len(pending) - len(fresh)
            changed = {d.id for d in fresh if d.id in stored}
            report.documents_changed += len(changed)
            report.documents_new += len(fresh) - len(changed)
            pending, pending_chunks = [], 0
            progress.to_embed(sum(len(d.chunks) for d in fresh))
            return (fresh, changed) if fresh else None

        while True:
            item = parsed.get()
            if item is _DONE:
                break
            if isinstance(item, Skipped):
                report.skipped.append(item)
                log.info("skipped %s", item)
                continue
            progress.parsed()
            if item.id in seen:
                report.skipped.append(Skipped(item.source, f"duplicate document id {item.id!r} "
                                                           f"(first seen in {seen[item.id]})"))
                log.info("skipped %s", report.skipped[-1])
                continue
            seen[item.id] = item.source
            if isinstance(item, Unchanged):  # its file matched the stored hash: not parsed
                report.documents_unchanged += 1
                continue
            if not item.chunks:
                report.skipped.append(Skipped(item.source, "no text to index"))
                continue
            pending.append(item)
            pending_chunks += len(item.chunks)
            if pending_chunks >= self.options.embed_batch_chunks:
                batch = flush()
                if batch:
                    yield batch
        batch = flush()
        if batch:
            yield batch

    def _embed_and_queue(self, batch: tuple[list[Document], set[str]], report: IngestReport,
                         progress: _Progress, to_write: queue.Queue) -> None:
        docs, changed = batch
        chunks = [chunk for doc in docs for chunk in doc.chunks]
        texts = [chunk.text for chunk in chunks]
        step = max(1, self.options.embed_batch_chunks)
        for start in range(0, len(chunks), step):  # one large document is many steps of the bar, not one
            part = chunks[start:start + step]
            started = time.perf_counter()
            vectors = self.embedder.embed(texts[start:start + step])
            report.embed_seconds += time.perf_counter() - started
            for chunk, vector in zip(part, vectors, strict=True):
                chunk.embedding = vector
            progress.update("embedded", len(part))
        report.chunks += len(chunks)
        report.sections += sum(len(doc.sections) for doc in docs)
        to_write.put((docs, changed))
