"""Sections into chunks: recursive character splitting that never crosses a section boundary."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from langchain_text_splitters import RecursiveCharacterTextSplitter

from neoweave.ingest.documents import Chunk, Document


@dataclass(frozen=True)
class ChunkingOptions:
    chunk_size: int = 1000
    """Characters per chunk (LARAG used 1000 for HTML docs; the thesis 1200 for records)."""
    chunk_overlap: int = 150

    def __post_init__(self) -> None:
        if self.chunk_size < 50:
            raise ValueError(f"chunk_size must be at least 50 characters, got {self.chunk_size}")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError(f"chunk_overlap must be in [0, chunk_size), got {self.chunk_overlap}")


# Per-format defaults, from the papers the platform reproduces.
DEFAULT_CHUNKING = {
    "html": ChunkingOptions(1000, 150),
    "markdown": ChunkingOptions(1000, 150),
    "text": ChunkingOptions(1000, 150),
    "pdf": ChunkingOptions(1000, 150),  # PDF and DOCX read as text: the text defaults
    "docx": ChunkingOptions(1000, 150),
    "record": ChunkingOptions(1200, 100),
}


class Chunker:
    def __init__(self, options: ChunkingOptions) -> None:
        self.options = options
        self._splitter = RecursiveCharacterTextSplitter(
            chunk_size=options.chunk_size, chunk_overlap=options.chunk_overlap, add_start_index=True,
            strip_whitespace=True,
        )

    def chunk(self, document: Document) -> Document:
        """Fill each section's chunks (ids `{section_id}:{n}`, offsets into the document text)."""
        order = 0
        for section in document.sections:
            section.chunks = []
            if not section.text.strip():
                continue
            # external links by offset, so each chunk finds its own by bisection (a page of one section with
            # thousands of links would otherwise scan them all for every chunk)
            external = sorted(((link.start, n, link) for n, link in enumerate(section.links) if not link.internal),
                              key=lambda item: (item[0], item[1]))
            starts = [item[0] for item in external]
            for index, piece in enumerate(self._splitter.create_documents([section.text])):
                start = int(piece.metadata.get("start_index", 0))
                text = piece.page_content
                chunk = Chunk(id=f"{section.id}:{index}", order=order, text=text,
                              start=section.start + start, end=section.start + start + len(text))
                first, last = bisect.bisect_left(starts, start), bisect.bisect_left(starts, start + len(text))
                chunk.external_links = [{"url": link.url, "text": link.text}
                                        for _, _, link in sorted(external[first:last], key=lambda item: item[1])]
                section.chunks.append(chunk)
                order += 1
        return document
