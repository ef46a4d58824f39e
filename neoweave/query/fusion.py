"""Weighted reciprocal rank fusion: one ranking from several ranked lists (dense, BM25, tag paths, ...).

S(d) = sum over lists j of w_j / (c + rank_j(d)), rank from 1, a list that does not hold d adding nothing
(Cormack et al. 2009; Orion-RAG weighs its tag, semantic and sparse lists 0.25 / 0.25 / 0.5 with c = 60).
Scores are not needed, so lists scored on different scales (cosine, BM25) combine without normalising.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def weighted_rrf(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], *, c: float = 60.0
                 ) -> list[tuple[str, float]]:
    """(item, fused score) best first; ties broken by the item. `rankings` maps a list's name to its items
    best first (an item repeated in one list counts at its first rank); `weights` gives each list's weight
    (a list without a weight weighs 0)."""
    scores: dict[str, float] = {}
    for name, items in rankings.items():
        weight = weights.get(name, 0.0)
        seen: set[str] = set()
        for rank, item in enumerate(items, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (c + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
