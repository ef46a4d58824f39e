"""Sparse retrieval: Okapi BM25 over chunk text, on either store's full-text index.

Neo4j's full-text index is Lucene (BM25 already); FalkorDB's is RediSearch with TF-IDF, whose any-word query
ranked chunks repeating common words ('North Carolina' ten times) above the one chunk naming the rare word
('Leland'): HotpotQA-100 sparse perfect@5 was 0.01 that way. So both stores do the same two statements: the
index is asked one term at a time (each term's document frequency and its best chunks), and the candidates are
scored by BM25 in Cypher (`chunk_term_postings`, `chunk_bm25`): 0.54 on the same questions, identical
rankings on both stores. The collection statistics (chunk count, mean length) are read once per store and
kept for `STATS_SECONDS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neoweave.nlp.names import STOPWORDS
from neoweave.store.base import GraphStore

STATS_SECONDS = 300.0
MAX_TERMS = 24
_WORD = re.compile(r"\w+")

Run = Callable[[str, dict[str, Any]], list[dict[str, Any]]]


def query_terms(text: str, limit: int = MAX_TERMS) -> list[str]:
    """The words BM25 scores: lower case, no stopwords or single characters, each once, at most `limit`."""
    words = (word.lower() for word in _WORD.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOPWORDS))[:limit]


def collection_stats(store: GraphStore, run: Run | None = None) -> dict[str, Any]:
    """{chunks, avg_tokens} of the store, cached on the store for STATS_SECONDS (a label scan, ~10 ms per 10k
    chunks)."""
    def read() -> dict[str, Any]:
        rows = (run or (lambda name, params: store.run(name, params)))("chunk_text_stats", {})
        return {"chunks": int(rows[0]["chunks"] or 0) if rows else 0,
                "avg_tokens": float(rows[0]["avg_tokens"] or 1.0) if rows else 1.0}

    return store.cached("bm25_collection_stats", STATS_SECONDS, read)


@dataclass
class Postings:
    """The query's terms with their document frequencies and best chunks (`chunk_term_postings`)."""

    rows: list[dict[str, Any]]

    @property
    def candidates(self) -> list[str]:
        return list(dict.fromkeys(chunk_id for row in self.rows for chunk_id in row["top"]))


def postings(run: Run, text: str, per_term: int) -> Postings:
    terms = query_terms(text)
    if not terms:
        return Postings([])
    rows = run("chunk_term_postings", {"terms": terms, "per_term": per_term})
    rank = {term: number for number, term in enumerate(terms)}  # the query's order, not the store's grouping
    rows = sorted(rows, key=lambda r: rank.get(r["term"], len(rank)))
    return Postings([{"term": r["term"], "df": int(r["df"]), "top": list(r["top"])} for r in rows if r["df"]])


def bm25(run: Run, store: GraphStore, found: Postings, k: int, *, ids: list[str] | None = None, k1: float = 1.2,
         b: float = 0.75) -> list[dict[str, Any]]:
    """Chunk rows (with `score` = BM25) of the best k among `ids` (default: the postings' candidates)."""
    ids = found.candidates if ids is None else ids
    if not found.rows or not ids or k < 1:
        return []
    stats = collection_stats(store, run)
    chunks = max(stats["chunks"], *(row["df"] for row in found.rows))  # stale stats must not turn idf negative
    return run("chunk_bm25", {"ids": ids, "postings": found.rows, "chunks": chunks,
                              "avg_tokens": max(stats["avg_tokens"], 1.0), "k1": k1, "b": b, "k": k})
