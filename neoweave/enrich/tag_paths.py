"""Orion-RAG tag paths: P = master tags (the document's) followed by paragraph tags (the chunk's).

The path is stored on the chunk as text (`tag_path`) with its embedding (`tag_path_embedding`, the tag index).
It is rebuilt from the graph's TAGGED edges, so a user's edit and a machine run produce it the same way: tags a
user added lead their layer, tags a user removed are left out, machine tags follow in their rank order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.nlp.keyphrases import normalize_tag
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore
from neoweave.store.values import batched

SEPARATOR = " > "


def checked_tag(tag: str) -> str:
    """The normalised tag, or an error naming it when nothing is left (a user's input)."""
    name = normalize_tag(tag)
    if not name:
        raise NeoweaveError(f"tag {tag!r} has no letters or digits")
    return name


def ordered(tags: Iterable[dict[str, Any]]) -> list[str]:
    """Tag names of one layer: user-added first (in edit order), then machine tags by rank; each once; a tag a
    user removed never."""
    rows = list(tags)
    removed = {t["name"] for t in rows if t.get("removed")}
    rows = [t for t in rows if t.get("name") and t["name"] not in removed]
    user = [t for t in rows if t.get("method") == "user"]
    machine = sorted((t for t in rows if t.get("method") != "user"), key=lambda t: (t.get("rank") or 0, t["name"]))
    return list(dict.fromkeys(t["name"] for t in [*user, *machine]))


def path_text(master: list[str], paragraph: list[str]) -> str:
    """The tag path of a chunk: master tags then paragraph tags, each tag once."""
    return SEPARATOR.join(dict.fromkeys([*master, *paragraph]))


def refresh_tag_paths(store: GraphStore, embedder: TextEmbedder, chunk_ids: list[str], *, batch: int = 256) -> int:
    """Rebuild and re-embed the tag paths of chunks from their TAGGED edges; returns the chunks written.
    A chunk with no tag at all gets an empty path and no embedding (it leaves the tag index)."""
    written = 0
    for ids in batched(chunk_ids, batch):
        rows = store.run("tag_path_inputs", {"chunk_ids": ids})
        paths = {r["chunk_id"]: path_text(ordered(r["master"]), ordered(r["own"])) for r in rows}
        tagged = [chunk_id for chunk_id, path in paths.items() if path]
        vectors = embedder.embed([paths[c] for c in tagged]) if tagged else []
        by_id = dict(zip(tagged, vectors, strict=True))
        store.run("set_chunk_tag_paths", {"rows": [
            {"id": chunk_id, "path": path or None, "embedding": by_id.get(chunk_id)} for chunk_id, path in paths.items()
        ]}, write=True)
        written += len(paths)
    return written
