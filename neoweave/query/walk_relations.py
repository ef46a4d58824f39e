"""kg's relation hops over the walk index (`query.walk_index`): the candidates `kg_entity_relations` would return,
scored from the index's relation adjacency, weights and entity vectors without a statement per hop. Only the
facts kg keeps are then read from the store, with their texts (`kg_relation_details`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neoweave.query.walk_index import WalkIndex


def relation_candidates(index: WalkIndex, entity_ids: Sequence[str], embedding: Sequence[float], *,
                        per_entity: int, weight_factor: float, max_degree: int, min_score: float
                        ) -> list[dict[str, Any]]:
    """For each entity of the frontier, its `per_entity` best relations (either direction) by cosine(question,
    other end) + weight_factor * ln(1 + weight), as the statement ranks them, ties included (a cut between them
    must keep the same relations on a copy of the graph without the index): hubs (relation count above
    `max_degree`) not expanded, relations below `min_score` left out. Rows carry the relation's key (`source_id`,
    `target_id`, `type`) and its score; its texts come later, for the kept ones only."""
    numbers = list(dict.fromkeys(index.numbers(index.entity_ids, entity_ids)))
    numbers = [n for n in numbers if index.entity_relations[n] <= max_degree]
    if not numbers or per_entity <= 0:
        return []
    spans = [(index.related_ptr[n], index.related_ptr[n + 1]) for n in numbers]
    edges = np.concatenate([index.related_idx[start:end] for start, end in spans]).astype(np.int64)
    owner = np.repeat(np.array(numbers, dtype=np.int64), [end - start for start, end in spans])
    starts, ends = index.related_start[edges], index.related_end[edges]
    others = np.where(starts == owner, ends, starts)
    # one cosine per distinct other end, so one entity reached by two relations scores the same through both
    distinct, place = np.unique(others, return_inverse=True)
    cosine, _ = index.entity_cosines(distinct, np.asarray(embedding, dtype=np.float32))
    # the statement's score, log(1 + weight) as it computes it, and its order: the score rounded to 1e-6, then
    # the other end's id, the start's id and the type (ids are numbered in their order, the types sorted, none last)
    scores = cosine.astype(np.float64)[place] + weight_factor * np.log(1 + index.related_weight[edges])
    rounded = np.sign(scores) * np.floor(np.abs(scores) * 1_000_000 + 0.5)  # Cypher's round: halves away from 0
    codes = index.related_type_code[edges]
    type_rank = np.where(codes >= 0, codes, len(index.related_types))
    segment = np.repeat(np.arange(len(numbers)), [end - start for start, end in spans])
    order = np.lexsort((type_rank, starts, others, -rounded, segment))
    order = order[scores[order] >= min_score]  # left out before the cut, as the statement's WHERE
    firsts = np.searchsorted(segment[order], np.arange(len(numbers) + 1))
    ids, types = index.names("entity_ids"), index.related_types
    rows: list[dict[str, Any]] = []
    for n, number in enumerate(numbers):
        for i in order[firsts[n]:min(firsts[n + 1], firsts[n] + per_entity)]:
            code = codes[i]
            rows.append({"entity_id": ids[number], "other_id": ids[others[i]], "source_id": ids[starts[i]],
                         "target_id": ids[ends[i]], "type": str(types[code]) if code >= 0 else None,
                         "score": float(scores[i])})
    return rows
