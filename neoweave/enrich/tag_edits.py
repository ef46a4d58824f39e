"""Human-in-the-loop tags (Orion-RAG): show, add and remove a document's or a chunk's tags.

An edit is a TAGGED edge with `method: "user"`, who made it (`by`) and when (`edited_at`); removing a machine
tag keeps its edge marked `removed`, so re-running the tag enricher never brings it back, and re-ingesting an
unchanged document touches nothing. The tag paths of the chunks concerned (one chunk, or every chunk of a
document for a master tag) are rebuilt and re-embedded at once.

    from neoweave.enrich.tag_edits import add_tag
    add_tag(store, embedder, "doc-42", "diversified business model", by="ana")
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field
from typing import Any

from neoweave.enrich.tag_paths import checked_tag, refresh_tag_paths
from neoweave.errors import NeoweaveError
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore
from neoweave.store.values import now_iso

REBUILD_AFTER = 200
"""Chunks re-embedded by one edit above which FalkorDB's vector indexes are rebuilt (its HNSW keeps a stale copy
of every updated vector; a few are absorbed by the over-fetch of every vector query, thousands are not)."""


@dataclass
class TagView:
    """A document's or a chunk's tags as `neoweave tags show` prints them."""

    id: str
    kind: str  # document | chunk
    doc_id: str
    title: str
    tag_path: str | None
    master: list[dict[str, Any]] = field(default_factory=list)
    paragraph: list[dict[str, Any]] = field(default_factory=list)


def show_tags(store: GraphStore, target: str) -> TagView:
    found = store.run("tags_target", {"id": target})
    row = found[0] if found else {}
    doc_id = row.get("chunk_doc_id") or row.get("doc_id")
    if not doc_id:
        raise NeoweaveError(f"no document or chunk with id {target!r}",
                            hint="`neoweave docs` lists documents; chunk ids are in query results and traces")
    kind = "chunk" if row.get("chunk_doc_id") else "document"
    tags = store.run("tags_show", {"doc_id": doc_id, "chunk_id": target if kind == "chunk" else ""})[0]

    def order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda t: (t["method"] != "user", t["rank"] or 0, t["tag"]))

    return TagView(target, kind, doc_id, tags["title"] or "", row.get("tag_path"), order(tags["master"]),
                   order(tags["paragraph"]) if kind == "chunk" else [])


def add_tag(store: GraphStore, embedder: TextEmbedder, target: str, tag: str, *, by: str | None = None) -> TagView:
    """Add `tag` to a document (a master tag) or a chunk (a paragraph tag); returns the tags after the edit."""
    return _edit(store, embedder, target, tag, removed=False, by=by)


def remove_tag(store: GraphStore, embedder: TextEmbedder, target: str, tag: str, *, by: str | None = None) -> TagView:
    """Remove `tag` from a document or a chunk (kept as a removal, so no machine run restores it)."""
    return _edit(store, embedder, target, tag, removed=True, by=by)


def editor() -> str:
    """Who an edit is recorded as when the caller does not say: NEOWEAVE_USER, else the login name."""
    try:
        return os.environ.get("NEOWEAVE_USER") or getpass.getuser()
    except OSError:
        return "unknown"


def _edit(store: GraphStore, embedder: TextEmbedder, target: str, tag: str, *, removed: bool, by: str | None
          ) -> TagView:
    name = checked_tag(tag)
    view = show_tags(store, target)
    params = {"id": target, "tag": name, "removed": removed, "by": by or editor(), "now": now_iso()}
    if removed and name not in {t["tag"] for t in (view.paragraph if view.kind == "chunk" else view.master)}:
        raise NeoweaveError(f"{view.kind} {target!r} has no tag {name!r}")
    with store.unit() as unit:
        unit.run(f"tags_user_edit_{view.kind}", params)
    chunk_ids = [target] if view.kind == "chunk" else [r["id"] for r in store.run("document_chunk_ids",
                                                                               {"doc_ids": [target]})]
    store.upgrade_schema()
    refresh_tag_paths(store, embedder, chunk_ids)
    if len(chunk_ids) > REBUILD_AFTER:
        store.refresh_vector_indexes(("Chunk",))
    return show_tags(store, target)
