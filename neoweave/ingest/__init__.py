"""Ingest: documents into the lexical and hyperlink graph (HTML, JSON/JSONL records, text, Markdown, PDF, DOCX).

    Ingestor(store, embedder, IngestOptions()).ingest("docs/")     # what `kb.ingest("docs/")` runs
"""

from __future__ import annotations

from pathlib import Path

from neoweave.ingest.documents import Document, Skipped
from neoweave.ingest.html import HtmlOptions
from neoweave.ingest.pipeline import IngestInterrupted, IngestOptions, Ingestor, IngestReport
from neoweave.ingest.sources import SourceOptions
from neoweave.ingest.writer import GraphWriter, LinkReport
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore

__all__ = [
    "Document",
    "GraphWriter",
    "HtmlOptions",
    "IngestInterrupted",
    "IngestOptions",
    "IngestReport",
    "Ingestor",
    "LinkReport",
    "Skipped",
    "SourceOptions",
    "delete_documents",
]


def delete_documents(store: GraphStore, key: str, embedder: TextEmbedder | None = None) -> list[str]:
    """Delete the documents whose id is `key`, or that were read from the file or folder `key`; their ids.
    Documents that linked to them keep their other links, with their context embeddings (`embedder` embeds any
    a link re-resolution changes)."""
    candidate = Path(key).expanduser()
    path_key = str(candidate.resolve()) if candidate.exists() else key
    writer = GraphWriter(store, embedder)
    found = writer.find_documents(path_key, path_key.rstrip("/") + "/")
    if not found and path_key != key:
        found = writer.find_documents(key, key.rstrip("/") + "/")
    ids = [row["id"] for row in found]
    writer.delete_documents(ids)
    return ids
