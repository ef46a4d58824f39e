"""Link-context embeddings on LINKS_TO edges: what LARAG compares the question and target chunks with.

LARAG embeds a link's context the first time the link is considered and caches it on the edge. For
steady query latency, `embed_all_link_contexts` (`neoweave ingest --link-contexts`) embeds every missing
one right after ingest, in batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tqdm import tqdm

from neoweave.embeddings import Embedder
from neoweave.errors import NeoweaveError
from neoweave.store.base import GraphStore


def link_embedding_rows(missing: Sequence[dict[str, Any]], embedder: Embedder) -> list[dict[str, Any]]:
    """Rows for `set_link_context_embeddings` from rows of the `links_missing_context_embedding*` statements."""
    vectors = embedder.embed([row["context"] or "" for row in missing])
    return [{"source_id": r["source_id"], "target_id": r["target_id"], "order": r["order"], "embedding": v}
            for r, v in zip(missing, vectors, strict=True)]


def embed_all_link_contexts(store: GraphStore, embedder: Embedder, *, batch_size: int = 1024,
                            progress: bool = True) -> int:
    """Embed the context of every link that has none yet; returns how many were embedded."""
    done = 0
    seen: set[tuple[str, str, Any]] = set()
    with tqdm(desc="link contexts", unit="link", disable=not progress) as bar:
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
