"""The ingest pipeline: parse and chunk, embed, write, resolve links; each stage overlapping the next.

A parser thread reads and chunks documents into a bounded queue; the calling thread checks stored content
hashes (unchanged documents are never embedded) and embeds new or changed chunks in batches; a writer
thread writes each embedded batch as one unit. Bounded queues keep memory flat however large the corpus, and
a large document is embedded and written a few sections at a time (`ingest.parts`).

Ctrl-C (or SIGTERM, which the CLI turns into the same exception) stops after the batches already embedded are
written: what is stored is whole documents and the finished sections of a large one, and `IngestInterrupted`
carries the report of what was kept; the next ingest or sync of the same path finishes the rest.
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
from neoweave.ingest.parts import ChunkBudget, DocumentBatch, DocumentPart, plan_parts
from neoweave.ingest.progress import IngestProgress
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
    documents_resumed: int = 0
    """Large documents a stopped run left partly written that this run continued (not among new or changed)."""
    interrupted: bool = False
    """Stopped by Ctrl-C or SIGTERM: what is counted here was written; links were not resolved yet."""
    documents_partly_written: int = 0
    """Of the new, changed and resumed documents, the large ones a stopped run did not finish (in `incomplete`)."""
    incomplete: list[dict[str, Any]] = field(default_factory=list)
    """Large documents the graph holds partly written (id, source, path, sections_written, sections_total):
    ingesting or syncing their file again completes them."""

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped"] = [str(s) for s in self.skipped]
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        return data


class IngestInterrupted(KeyboardInterrupt):
    """Ingest stopped by Ctrl-C or SIGTERM after writing what it had embedded; `report` says what was kept
    (raised from the interrupt, so a SIGTERM is still told apart)."""

    def __init__(self, report: IngestReport) -> None:
        super().__init__("ingest interrupted")
        self.report = report


@dataclass(frozen=True)
class IngestOptions:
    sources: SourceOptions = field(default_factory=SourceOptions)
    chunk_size: int | None = None
    """Characters per chunk; None uses the per-format default (1000 for HTML/text/PDF/DOCX, 1200 for records)."""
    chunk_overlap: int | None = None
    embed_batch_chunks: int = 256
    """Chunks per embedding call (and per write unit)."""
    large_document_chunks: int = 512
    """A document with more chunks is embedded and written a part (about `embed_batch_chunks` chunks of whole
    sections) at a time, marked incomplete until its last part is stored; one with fewer, as one unit."""
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
        if built.embed_batch_chunks < 1 or built.large_document_chunks < 1:
            raise ValueError("embed_batch_chunks and large_document_chunks must be at least 1")
    except (TypeError, ValueError) as exc:
        raise NeoweaveError(f"invalid {command} option: {exc}") from exc
    return built


def _lower_thread_priority() -> None:
    """Let embedding (the bottleneck) have the cores first: parsing and writing fill the gaps.

    Linux applies nice values per thread; elsewhere this is a no-op.
    """
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


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
        progress = IngestProgress(self.options.progress, stats)
        parsed: queue.Queue = queue.Queue(maxsize=16)
        to_write: queue.Queue = queue.Queue(maxsize=2)
        failure: list[BaseException] = []
        stop = threading.Event()
        budget = ChunkBudget(self.options.large_document_chunks)

        count_tokens = self.embedder.token_counter()

        def produce() -> None:
            _lower_thread_priority()
            chunkers = {fmt: Chunker(self.options.chunking(fmt)) for fmt in DEFAULT_CHUNKING}
            try:
                documents = iter(items(stats))
                while True:
                    budget.wait(stop)  # a large document in flight: read the next file once it is nearly done
                    item = _DONE if stop.is_set() else next(documents, _DONE)
                    if item is _DONE or stop.is_set():
                        return
                    if isinstance(item, Document):
                        chunks = chunkers[item.format].chunk(item).chunks
                        for chunk, count in zip(chunks, count_tokens([c.text for c in chunks]), strict=True):
                            chunk.token_count = count
                        budget.add(len(chunks))
                    parsed.put(item)
            except BaseException as exc:
                failure.append(exc)
            finally:
                parsed.put(_DONE)

        def consume() -> None:
            _lower_thread_priority()
            try:
                while True:
                    job = to_write.get()
                    if job is _DONE:
                        return
                    if not failure:
                        self._write(job, report)
                        progress.written_part(len(job.chunks), job.sections)
            except BaseException as exc:
                failure.append(exc)
                stop.set()
                while to_write.get() is not _DONE:  # drain so the embedding loop never blocks
                    pass

        producer = threading.Thread(target=produce, name="neoweave-parse", daemon=True)
        writer = threading.Thread(target=consume, name="neoweave-write", daemon=True)
        producer.start()
        writer.start()
        interrupted: KeyboardInterrupt | None = None
        try:
            for job in self._jobs(parsed, report, progress, budget):
                if failure:
                    break
                self._embed_and_queue(job, report, progress, to_write)
                budget.release(len(job.chunks))
        except KeyboardInterrupt as exc:  # the jobs already embedded are written below, then the run stops
            interrupted = exc
        finally:
            stop.set()
            to_write.put(_DONE)
            writer.join()
            while producer.is_alive() and interrupted is None:  # unblock a producer waiting on a full queue
                with contextlib.suppress(queue.Empty):
                    parsed.get(timeout=0.1)
            with contextlib.suppress(queue.Empty):  # after Ctrl-C a file being parsed is not waited for: room for
                while interrupted is not None:      # its last put, then it sees the stop and ends
                    parsed.get_nowait()
            producer.join(None if interrupted is None else 0)
            progress.close()
        if failure:
            exc = failure[0]
            raise exc if isinstance(exc, NeoweaveError) else NeoweaveError(
                f"ingest failed: {type(exc).__name__}: {exc}") from exc
        report.files_seen, report.files_ignored = stats.files_seen, stats.files_ignored
        if interrupted is not None:
            self._stopped(report, started)
            raise IngestInterrupted(report) from interrupted

        wrote = report.documents_new + report.documents_changed + report.documents_resumed
        links = self.writer.resolve_links(retry_unresolved=wrote > 0)
        self._add_links(report, links)
        # resolution embedded the contexts of the links it made; any still missing (older graphs) are embedded here
        report.link_contexts_embedded += embed_all_link_contexts(self.store, self.embedder,
                                                                 progress=self.options.progress)
        if report.documents_changed and self.refresh_indexes:  # rewritten chunks and forgotten entity facts
            self.store.refresh_vector_indexes(("Chunk", "Entity"))  # (see refresh_vector_indexes)
        report.incomplete = self.writer.incomplete_documents()
        report.seconds = time.perf_counter() - started
        return report

    def _stopped(self, report: IngestReport, started: float) -> None:
        """After an interrupt: what was written stays, links wait for the next run (their documents are marked
        pending); rewritten chunks make the vector indexes exact again first, as a finished run does."""
        report.interrupted = True
        if report.documents_changed:
            self.store.refresh_vector_indexes(("Chunk", "Entity"))
        report.incomplete = self.writer.incomplete_documents()
        report.seconds = time.perf_counter() - started

    def _write(self, job: DocumentBatch | DocumentPart, report: IngestReport) -> None:
        """Write one unit, count what it stored, and let go of its vectors (written parts need none)."""
        if isinstance(job, DocumentBatch):
            self.writer.write_documents(job.docs, job.changed)
            report.documents_changed += len(job.changed)
            report.documents_new += len(job.docs) - len(job.changed)
        else:
            self.writer.write_part(job)
            if job.resumed:
                report.documents_resumed += 1
            elif job.begin:
                report.documents_changed += job.changed
                report.documents_new += not job.changed
            report.documents_partly_written += (job.begin or job.resumed) - job.last
        chunks = job.chunks
        report.chunks += len(chunks)
        report.sections += job.sections
        for chunk in chunks:
            chunk.embedding = None

    @staticmethod
    def _add_links(report: IngestReport, links: LinkReport) -> None:
        report.links_resolved += links.resolved
        report.links_unresolved += links.unresolved
        report.self_links += links.self_links
        report.link_contexts_embedded += links.contexts_embedded

    def _jobs(self, parsed: queue.Queue, report: IngestReport, progress: IngestProgress, budget: ChunkBudget
              ) -> Iterator[DocumentBatch | DocumentPart]:
        """Batches of new or changed documents (about `embed_batch_chunks` chunks each), and the parts of large
        ones."""
        seen: dict[str, str] = {}
        pending: list[Document] = []
        pending_chunks = 0

        def flush() -> DocumentBatch | None:
            nonlocal pending, pending_chunks
            if not pending:
                return None
            stored = self.writer.stored_hashes(d.id for d in pending)
            fresh = [d for d in pending if stored.get(d.id) != d.content_hash]
            report.documents_unchanged += len(pending) - len(fresh)
            budget.release(sum(len(d.chunks) for d in pending if stored.get(d.id) == d.content_hash))
            pending, pending_chunks = [], 0
            if not fresh:
                return None
            batch = DocumentBatch(fresh, {d.id for d in fresh if d.id in stored})
            progress.to_write(len(batch.chunks), batch.sections)
            return batch

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
                if isinstance(item, Document):
                    budget.release(len(item.chunks))
                continue
            seen[item.id] = item.source
            if isinstance(item, Unchanged):  # its file matched the stored hash: not parsed
                report.documents_unchanged += 1
                continue
            if not item.chunks:
                report.skipped.append(Skipped(item.source, "no text to index"))
                continue
            if len(item.chunks) > self.options.large_document_chunks:
                if batch := flush():
                    yield batch
                yield from self._parts(item, report, progress, budget)
                continue
            pending.append(item)
            pending_chunks += len(item.chunks)
            if pending_chunks >= self.options.embed_batch_chunks and (batch := flush()):
                yield batch
        if batch := flush():
            yield batch

    def _parts(self, doc: Document, report: IngestReport, progress: IngestProgress, budget: ChunkBudget
               ) -> Iterator[DocumentPart]:
        """A large document's parts: all, or those after the sections a stopped run stored of this content."""
        state = self.writer.write_states([doc.id]).get(doc.id)
        if state is not None and state.content_hash == doc.content_hash:
            report.documents_unchanged += 1
            budget.release(len(doc.chunks))
            return
        resumed = state is not None and state.resumes(doc)
        start = state.sections_written if state is not None and resumed else 0
        done = sum(len(section.chunks) for section in doc.sections[:start])
        budget.release(done)
        progress.to_write(len(doc.chunks) - done, len(doc.sections) - start)
        if resumed:
            log.info("continuing %s from section %d of %d", doc.source, start + 1, len(doc.sections))
        for first, end in plan_parts(doc, start, self.options.embed_batch_chunks):
            yield DocumentPart(doc, first, end, begin=first == 0, changed=state is not None and not resumed,
                               resumed=resumed and first == start)

    def _embed_and_queue(self, job: DocumentBatch | DocumentPart, report: IngestReport, progress: IngestProgress,
                         to_write: queue.Queue) -> None:
        chunks = job.chunks
        texts = [chunk.text for chunk in chunks]
        step = max(1, self.options.embed_batch_chunks)
        for start in range(0, len(chunks), step):  # one large batch is many steps of the bar, not one
            part = chunks[start:start + step]
            started = time.perf_counter()
            vectors = self.embedder.embed(texts[start:start + step])
            report.embed_seconds += time.perf_counter() - started
            for chunk, vector in zip(part, vectors, strict=True):
                chunk.embedding = vector
            progress.embedded_chunks(len(part))
        to_write.put(job)
