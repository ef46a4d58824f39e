"""Ingest: documents into the lexical and hyperlink graph (HTML, JSON/JSONL records, text and Markdown).

    from neoweave.ingest import ingest
    report = ingest("docs/")            # the configured store and embedding model
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neoweave.ingest.documents import Document, Skipped
from neoweave.ingest.html import HtmlOptions
from neoweave.ingest.pipeline import IngestOptions, Ingestor, IngestReport
from neoweave.ingest.sources import SourceOptions
from neoweave.ingest.writer import GraphWriter, LinkReport

__all__ = [
    "Document",
    "GraphWriter",
    "HtmlOptions",
    "IngestOptions",
    "IngestReport",
    "Ingestor",
    "LinkReport",
    "Skipped",
    "SourceOptions",
    "delete",
    "ingest",
]


def ingest(path: str | Path, *, settings: Any = None, **options: Any) -> IngestReport:
    """Ingest `path` into the configured store. `options` are IngestOptions / SourceOptions fields."""
    from neoweave.config import load_settings
    from neoweave.embeddings import Embedder
    from neoweave.store import open_store

    settings = settings or load_settings()
    source_fields = set(SourceOptions.__dataclass_fields__)
    source_options = SourceOptions(**{k: v for k, v in options.items() if k in source_fields})
    ingest_options = IngestOptions(sources=source_options,
                                   **{k: v for k, v in options.items() if k not in source_fields})
    with open_store(settings) as store:
        return Ingestor(store, Embedder(settings.embedding.model), ingest_options).ingest(path)


def delete(key: str, *, settings: Any = None) -> list[str]:
    """Delete the documents whose id is `key`, or that were read from the file or folder `key`."""
    from neoweave.config import load_settings
    from neoweave.store import open_store

    settings = settings or load_settings()
    candidate = Path(key).expanduser()
    path_key = str(candidate.resolve()) if candidate.exists() else key
    with open_store(settings) as store:
        writer = GraphWriter(store)
        found = writer.find_documents(path_key, path_key.rstrip("/") + "/")
        if not found and path_key != key:
            found = writer.find_documents(key, key.rstrip("/") + "/")
        ids = [row["id"] for row in found]
        writer.delete_documents(ids)
        return ids
