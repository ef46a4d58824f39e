"""Hybrid retrieval: dense (vector) and sparse (BM25) chunk lists fused by weighted reciprocal rank fusion, the
first-stage retrieval most RAG systems ship (neo4j-graphrag's HybridRetriever; Orion-RAG's "Hybrid" baseline,
RRF 50/50). Statements: `chunk_vector_search`, `chunk_term_postings`, `chunk_bm25`.
"""

from __future__ import annotations

from dataclasses import dataclass

from neoweave.query import sparse
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register
from neoweave.query.fusion import weighted_rrf


@register
@dataclass
class HybridRetriever(Strategy):
    name = "hybrid"

    k: int = 5
    """Chunks returned, by fused score."""
    dense_k: int = 20
    """Candidates from vector search."""
    sparse_k: int = 20
    """Candidates from BM25 over chunk text."""
    dense_weight: float = 0.5
    """RRF weight of the dense list."""
    sparse_weight: float = 0.5
    """RRF weight of the BM25 list."""
    rrf_c: float = 60.0
    """RRF constant c: larger flattens the advantage of the first ranks (60 as in the RRF paper)."""
    per_term: int = 20
    """BM25: chunks the full-text index gives per query term (the candidates BM25 ranks)."""
    bm25_k1: float = 1.2
    """BM25 term-frequency saturation."""
    bm25_b: float = 0.75
    """BM25 length normalisation."""

    def validate(self) -> None:
        self._at_least(1, "k", "per_term")
        self._at_least(0, "dense_k", "sparse_k", "dense_weight", "sparse_weight", "rrf_c", "bm25_k1", "bm25_b")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        with cost.timed("embed"):
            embedding = self.embedder.embed_query(question)

        def run(name: str, params: dict) -> list[dict]:
            return self._run(trace, name, params)

        with cost.timed("graph"):
            dense = run("chunk_vector_search", {"k": self.dense_k, "embedding": embedding}) if self.dense_k else []
        with cost.timed("sparse"):
            found = sparse.postings(run, question, self.per_term) if self.sparse_k else sparse.Postings([])
            bm25 = sparse.bm25(run, self.store, found, self.sparse_k, k1=self.bm25_k1, b=self.bm25_b)
        rows = {row["chunk_id"]: row for row in [*bm25, *dense]}  # dense rows win: their score is a cosine
        lists = {"dense": [r["chunk_id"] for r in dense], "sparse": [r["chunk_id"] for r in bm25]}
        ranks = {name: {chunk_id: rank for rank, chunk_id in enumerate(ids, 1)} for name, ids in lists.items()}
        fused = weighted_rrf(lists, {"dense": self.dense_weight, "sparse": self.sparse_weight}, c=self.rrf_c)
        items = []
        for chunk_id, score in fused[:self.k]:
            row = rows[chunk_id]
            trace.chunk(row["section_id"], chunk_id)
            items.append(ContextItem.from_row({**row, "score": score}, "fused", {
                "dense_rank": ranks["dense"].get(chunk_id), "sparse_rank": ranks["sparse"].get(chunk_id)}))
        return items
