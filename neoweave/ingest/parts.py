"""What the ingest pipeline embeds and writes as one unit: a batch of whole documents, or a part of a large one.

A document with more chunks than `IngestOptions.large_document_chunks` is embedded and written a part at a time
(whole sections, about `embed_batch_chunks` chunks a part), so memory holds one part's vectors, progress shows
sections as they are stored, and a stopped run keeps the parts it wrote. Until its last part is written the
Document node is marked incomplete: it has no `content_hash` (so the next `ingest` or `sync` reads its file
again), `incomplete_hash` holds the hash of the version being written and `sections_written` how many of its
sections, in order, are stored with their chunks. The next run that reads the same content continues from
there; other content starts the document over. Its stored sections are searchable meanwhile; its own links are
resolved, and other documents' links reach it, once it is complete.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from neoweave.ingest.documents import Chunk, Document, Section


@dataclass
class DocumentBatch:
    """Whole documents, written as one unit; `changed` names those the graph held another version of."""

    docs: list[Document]
    changed: set[str] = field(default_factory=set)

    @property
    def chunks(self) -> list[Chunk]:
        return [chunk for doc in self.docs for chunk in doc.chunks]

    @property
    def sections(self) -> int:
        return sum(len(doc.sections) for doc in self.docs)


@dataclass
class DocumentPart:
    """Sections `first` to `end` (exclusive) of a large document, written as one unit."""

    doc: Document
    first: int
    end: int
    begin: bool
    """The first part of a fresh write: it replaces whatever the graph holds of the document."""
    changed: bool
    """The graph held the document (another version, complete or not) before this write began."""
    resumed: bool = False
    """The first part written by a run that continues a write a stopped run began."""

    @property
    def last(self) -> bool:
        return self.end == len(self.doc.sections)

    @property
    def section_list(self) -> list[Section]:
        return self.doc.sections[self.first:self.end]

    @property
    def chunks(self) -> list[Chunk]:
        return [chunk for section in self.section_list for chunk in section.chunks]

    @property
    def sections(self) -> int:
        return self.end - self.first

    def previous_chunk_id(self) -> str | None:
        """The chunk before this part in reading order (stored by an earlier part): its NEXT_CHUNK joins them."""
        for section in reversed(self.doc.sections[:self.first]):
            if section.chunks:
                return section.chunks[-1].id
        return None


@dataclass(frozen=True)
class WriteState:
    """What the graph holds of a document: its content hash when complete, else the hash being written and how
    many sections are stored."""

    content_hash: str | None
    incomplete_hash: str | None
    sections_written: int

    def resumes(self, doc: Document) -> bool:
        """Whether a write of `doc` continues this one (same content, some but not all sections stored)."""
        return (self.incomplete_hash == doc.content_hash and self.content_hash is None
                and 0 < self.sections_written < len(doc.sections))


def plan_parts(doc: Document, start: int, chunks_per_part: int) -> Iterator[tuple[int, int]]:
    """(first, end) section ranges from section `start` on, each about `chunks_per_part` chunks (a section is
    never split: one larger than that is a part of its own)."""
    first, size = start, 0
    for index in range(start, len(doc.sections)):
        size += len(doc.sections[index].chunks)
        if size >= chunks_per_part:
            yield first, index + 1
            first, size = index + 1, 0
    if first < len(doc.sections):
        yield first, len(doc.sections)


class ChunkBudget:
    """Chunks parsed and not yet embedded. The parser waits before reading the next file while they are at the
    limit, so a large document is parsed only when the one before it is nearly embedded: memory holds about one
    large document at a time, however many the folder has."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.held = 0
        self._changed = threading.Condition()

    def add(self, chunks: int) -> None:
        with self._changed:
            self.held += chunks

    def release(self, chunks: int) -> None:
        with self._changed:
            self.held = max(0, self.held - chunks)
            self._changed.notify_all()

    def wait(self, stop: threading.Event) -> None:
        """Until the chunks held are under the limit (or `stop` is set)."""
        with self._changed:
            while self.held >= self.limit and not stop.is_set():
                self._changed.wait(0.2)
