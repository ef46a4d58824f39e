"""Link-context embeddings on LINKS_TO edges: what LARAG compares the question and target chunks with.

Ingest, `delete` and `sync` embed the contexts of the links they resolve, and `enrich kg` those of the links it
infers, in the write unit that creates them (`carry_link_contexts`): a reader never meets a link without its
context embedding, and a link that comes back unchanged keeps the one it has (deleting a link target re-resolves
the documents linking to it, and needs no model). `embed_all_link_contexts` embeds every one still missing (graphs
from before). Retrieval only reads them, and skips a link without one.
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


LinkKey = tuple[str, Any, str]
"""A link by its source section, order and target section (`set_link_context_embeddings` matches on them)."""


def _key(row: dict[str, Any]) -> LinkKey:
    return row["source_id"], row["order"], row["target_id"]


def carry_link_contexts(stored: Sequence[dict[str, Any]], links: Sequence[dict[str, Any]],
                        embedder: TextEmbedder | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What replacing the `stored` links (rows of `section_links_out`, of the kind being replaced) by
    `links` (rows to MERGE, with `context`) takes, in one write unit: the stored links to delete (`delete_links`
    rows: `links` no longer holds them), and the context embeddings to set (`set_link_context_embeddings` rows:
    every link that is new, points elsewhere, has another context, or had none). A link that comes back with its
    context keeps its embedding and costs no model call. Without an `embedder` nothing is embedded (a caller
    that embeds afterwards; retrieval skips the links meanwhile)."""
    wanted = {_key(row): row for row in links}
    kept = {_key(row) for row in stored if row["embedded"] and _key(row) in wanted
            and (wanted[_key(row)]["context"] or "") == (row["context"] or "")}
    stale = [{"source_id": s, "order": o, "target_id": t} for s, o, t in dict.fromkeys(map(_key, stored))
             if (s, o, t) not in wanted]
    todo = [row for key, row in wanted.items() if key not in kept]
    if embedder is None or not todo:
        return stale, []
    return stale, link_embedding_rows(todo, embedder)


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
