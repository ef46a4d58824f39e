"""The tie-break every ranking shares: a score rounded to 1e-6, then a stable key.

The same cosine or BM25 sum computed in another order can differ in its last bits, and equal scores (duplicate
passages, entities of one name) would otherwise come out in the order the store hands rows out, which a rebuild,
an import or a restore does not keep. Ranked statements do the same in Cypher, by a variable
(`WITH ..., round(score * 1000000) AS rounded_score ... ORDER BY rounded_score DESC, <id>`: FalkorDB sorts a RETURN
by nothing when its ORDER BY repeats an earlier ORDER BY's expression).
"""

from __future__ import annotations

from typing import Any

SCORE_DECIMALS = 6
"""Scores equal to this many decimals are ties, broken by the stable key."""


def best_first(score: float | None, *keys: Any) -> tuple[Any, ...]:
    """Sort key: the higher score (rounded to SCORE_DECIMALS; None as 0) first, then `keys` ascending."""
    return (-round(float(score or 0.0), SCORE_DECIMALS), *keys)
