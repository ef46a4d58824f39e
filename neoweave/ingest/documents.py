"""What loaders produce: parsed documents, their sections, links and chunks; and why an input was skipped."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Link:
    """A hyperlink found in a section's text.

    `target_url` is the absolute URL of the target page (no fragment); `anchor` its fragment ("" for none).
    `start`/`end` are offsets of the link text within the section text.
    """

    target_url: str
    anchor: str
    text: str
    context: str
    start: int
    end: int
    internal: bool

    @property
    def url(self) -> str:
        return f"{self.target_url}#{self.anchor}" if self.anchor else self.target_url


@dataclass
class Chunk:
    id: str
    order: int  # reading order within the document
    text: str
    start: int  # offsets within the document text
    end: int
    external_links: list[dict[str, str]] = field(default_factory=list)
    token_count: int = 0  # tokens as the embedding model sees them
    embedding: list[float] | None = None


@dataclass
class Section:
    id: str
    anchor: str
    title: str
    url: str
    order: int
    level: int
    text: str
    start: int = 0  # offsets within the document text
    end: int = 0
    links: list[Link] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)  # every element id inside the section (link targets)
    chunks: list[Chunk] = field(default_factory=list)
    pages: tuple[int, int] | None = None  # first and last page (1-based) of a PDF section: its provenance


@dataclass
class Document:
    id: str
    title: str
    url: str
    source: str  # file path (and line for records) it came from
    format: str
    content_hash: str
    sections: list[Section] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    published_at: str | None = None
    path: str = ""  # the file it was read from (`neoweave delete PATH` finds documents by it)

    @property
    def chunks(self) -> list[Chunk]:
        return [chunk for section in self.sections for chunk in section.chunks]

    def anchor_map(self) -> dict[str, str]:
        """Anchor (element id) -> id of the section that holds it."""
        mapping: dict[str, str] = {}
        for section in self.sections:
            for anchor in [section.anchor, *section.anchors]:
                if anchor:
                    mapping.setdefault(anchor, section.id)
        return mapping


@dataclass(frozen=True)
class Unchanged:
    """A file whose content hash (its bytes and the settings that shape its graph) is the stored document's:
    it is not parsed, since parsing could only give the document already stored (HTML, text, Markdown, PDF and
    DOCX files, one document each)."""

    id: str
    source: str
    path: str
    content_hash: str


@dataclass(frozen=True)
class Skipped:
    """An input that was not ingested, and why (shown to the user with its file and line)."""

    source: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"


def content_hash(content: bytes | str, settings: dict[str, Any]) -> str:
    """Hash of a document's content and of the settings that shape its graph (chunking, parser version).

    Changing chunk size re-ingests; re-running with the same content and settings changes nothing.
    """
    digest = hashlib.sha256()
    digest.update(content.encode("utf-8") if isinstance(content, str) else content)
    digest.update(json.dumps(settings, sort_keys=True).encode())
    return digest.hexdigest()

