"""Link-context embeddings on LINKS_TO edges: what LARAG compares the question and target chunks with.

Ingest embeds the contexts of the links it resolves, and `enrich kg` those of the links it infers
(`embed_all_link_contexts`, in batches, every one still missing): retrieval only reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from neoweave.errors import NeoweaveError
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore


def link_embedding_rows(missing: Sequence[dict[str, Any]], embedder: TextEmbedder) -> list[dict[str, Any]]:
    """Rows for `set_link_context_embeddings` from rows of the `links_missing_context_embedding*` statements."""
    vectors = embedder.embed([row["context"] or "" for row in missing])
    return [{"source_id": r["source_id"], "target_id": r["target_id"], "order": r["order"], "embedding": v}
            for r, v in zip(missing, vectors, strict=True)]


def embed_all_link_contexts(store: GraphStore, embedder: TextEmbedder, *, batch_size: int = 1024,
                            progress: bool = True) -> int:
    """Embed the context of every link that has none yet; returns how many were embedded."""
    done = 0
    seen: set[tuple[str, str, Any]] = set()
    total = None
    if progress:  # a count is one scan of the links: only when a bar shows it
        counted = store.run("links_count_missing_context_embedding")
        total = int(counted[0]["missing"] or 0) if counted else None
    with tqdm(total=total, desc="link contexts", unit="link", disable=not progress) as bar:
        while True:
            missing = store.run("links_missing_context_embedding_batch", {"limit": batch_size})
            if not missing:
                return done
            keys = {(row["source_id"], row["target_id"], row["order"]) for row in missing}
            if keys <= seen:  # written before but still missing: the write does not match the edge
                first = missing[0]
                raise NeoweaveError(f"could not store the context embedding of the link {first['source_id']} -> "
                                    f"{first['target_id']} (order {first['order']})")
            seen |= keys
            store.write_batches("set_link_context_embeddings", link_embedding_rows(missing, embedder))
            done += len(missing)
            bar.update(len(missing))
