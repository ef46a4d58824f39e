"""ppr's expansion over the walk index: the rows of the `ppr_expand` statement (same branches, same order of
candidates, same caps), computed from arrays in memory instead of sent to the store. See `ppr_expand.cypher`
for what each branch means; the comments below name the branch each block mirrors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from neoweave.query.walk_index import WalkIndex


class _Scores:
    """Cosines to the question, computed once per node."""

    def __init__(self, index: WalkIndex, embedding: list[float]) -> None:
        self.index = index
        question = np.asarray(embedding, dtype=np.float32)
        norm = float(np.linalg.norm(question))
        self.question = question / norm if norm > 0 else question
        self._entities: dict[int, float | None] = {}

    def chunks(self, numbers: np.ndarray) -> np.ndarray:
        return np.asarray(self.index.chunk_vectors[numbers], dtype=np.float32) @ self.question

    def entity(self, number: int | np.integer) -> float | None:
        number = int(number)
        if number not in self._entities:
            self.prefetch_entities([number])
        return self._entities[number]

    def prefetch_entities(self, numbers: Any) -> None:
        """Compute the cosines of these entities in one product (None for an entity without a vector)."""
        todo = np.array(sorted({int(n) for n in numbers} - self._entities.keys()), dtype=np.int64)
        if not len(todo):
            return
        cosines, present = self.index.entity_cosines(todo, self.question)
        for number, cosine, has in zip(todo.tolist(), cosines.tolist(), present.tolist(), strict=True):
            self._entities[number] = cosine if has else None

    def links(self, numbers: np.ndarray) -> np.ndarray:
        """Link context cosines, 0 for a link without a context vector (as coalesce(..., 0.0) does)."""
        scores = np.asarray(self.index.link_vectors[numbers], dtype=np.float32) @ self.question
        return np.where(self.index.link_has_vector[numbers], scores, 0.0)


def _row(start: str, start_label: str, rel_type: str, end: str, end_label: str, start_score: float | None,
         end_score: float | None, *, via_start: str | None = None, via_end: str | None = None, weight: float = 1.0,
         entity: tuple[str, float | None, str | None] | None = None) -> dict[str, Any]:
    entity_id, mentions, entity_type = entity or (None, None, None)
    return {"start_id": start, "start_label": start_label, "type": rel_type, "end_id": end, "end_label": end_label,
            "via_start": via_start, "via_end": via_end, "start_score": start_score, "end_score": end_score,
            "weight": weight, "entity_id": entity_id, "mentions": mentions, "entity_type": entity_type}


def _best(numbers: np.ndarray, scores: np.ndarray, keep: int) -> np.ndarray:
    """Positions of the `keep` highest scores, ties by number (= by id): ORDER BY score DESC, id."""
    order = np.lexsort((numbers, -scores))
    return order[:keep]


def expand(index: WalkIndex, entity_ids: Iterable[str], chunk_ids: Iterable[str], embedding: list[float], *,
           per_node: int, max_mentions: int, link_methods: Iterable[str]) -> list[dict[str, Any]]:
    """The `ppr_expand` rows for a frontier of entities and chunks."""
    scores = _Scores(index, embedding)
    entities = WalkIndex.numbers(index.entity_ids, entity_ids)
    chunks = WalkIndex.numbers(index.chunk_ids, chunk_ids)
    methods = set(link_methods)
    rows: list[dict[str, Any]] = []
    hubs = index.hubs(max_mentions)
    scores.prefetch_entities(entities)
    rows += _entity_mentions(index, scores, entities, per_node, hubs)
    rows += _entity_homes(index, scores, entities, per_node)
    rows += _entity_relations(index, scores, entities, per_node, hubs)
    rows += _chunk_mentions(index, scores, chunks, per_node, hubs)
    rows += _chunk_homes(index, scores, chunks, per_node)
    rows += _chunk_links(index, scores, chunks, per_node, methods)
    return rows


def missing_link_contexts(index: WalkIndex, chunk_ids: Iterable[str], link_methods: Iterable[str]
                          ) -> list[dict[str, Any]]:
    """`chunk_links_missing_context_embedding`: links out of the frontier chunks' sections without a context
    vector (source and target ids)."""
    methods = set(link_methods)
    missing: dict[tuple[str, str], dict[str, Any]] = {}
    for chunk in WalkIndex.numbers(index.chunk_ids, chunk_ids):
        section = int(index.chunk_section[chunk])
        if section < 0:
            continue
        span = slice(int(index.link_ptr[section]), int(index.link_ptr[section + 1]))
        for at in np.flatnonzero(_walked(index, span, methods) & ~index.link_has_vector[span]):
            source = _sid(index, section)
            target = _sid(index, index.link_target[span.start + at])
            missing[(source, target)] = {"source_id": source, "target_id": target}
    return list(missing.values())


def _walked(index: WalkIndex, links: slice, methods: set[str]) -> np.ndarray:
    """Which of the links in `links` are of a kind walked (as a mask over the slice)."""
    walked = np.zeros(links.stop - links.start, dtype=bool)
    if "authored" in methods:
        walked |= index.link_authored[links]
    if "inferred" in methods:
        walked |= index.link_inferred[links]
    return walked


def _neighbours(ptr: np.ndarray, idx: np.ndarray, row: int | np.integer) -> np.ndarray:
    """Row `row` of a CSR adjacency (`ptr`, `idx`)."""
    return idx[ptr[row]:ptr[row + 1]]


def _cid(index: WalkIndex, number: int | np.integer) -> str:
    return index.names("chunk_ids")[number]


def _sid(index: WalkIndex, number: int | np.integer) -> str:
    return index.names("section_ids")[number]


def _eid(index: WalkIndex, number: int | np.integer) -> str:
    return index.names("entity_ids")[number]


def _entity_fields(index: WalkIndex, entity: int | np.integer) -> tuple[str, float | None, str | None]:
    return index.entity_fields()[entity]


def _entity_mentions(index: WalkIndex, scores: _Scores, entities: list[int], per_node: int, hubs: np.ndarray
                     ) -> list[dict[str, Any]]:
    """Branch 1: chunks mentioning a frontier entity, closest to the question first."""
    rows = []
    for entity in entities:
        if hubs[entity]:
            continue
        chunks = _neighbours(index.mentioned_ptr, index.mentioned_idx, entity)
        if not len(chunks):
            continue
        chunk_scores = scores.chunks(chunks)
        fields = _entity_fields(index, entity)
        entity_score = scores.entity(entity)
        for at in _best(chunks, chunk_scores, per_node):
            rows.append(_row(_cid(index, chunks[at]), "Chunk", "MENTIONS", fields[0], "Entity",
                             float(chunk_scores[at]), entity_score, entity=fields))
    return rows


def _entity_homes(index: WalkIndex, scores: _Scores, entities: list[int], per_node: int) -> list[dict[str, Any]]:
    """Branch 2: chunks of a frontier entity's home sections (DESCRIBED_BY), closest first."""
    rows = []
    for entity in entities:
        homes = _neighbours(index.home_ptr, index.home_idx, entity)
        if not len(homes):
            continue
        chunk_lists = [_neighbours(index.section_chunk_ptr, index.section_chunk_idx, h) for h in homes]
        chunks = np.concatenate(chunk_lists)
        if not len(chunks):
            continue
        sections = np.concatenate([np.full(len(c), h) for c, h in zip(chunk_lists, homes, strict=True)])
        chunk_scores = scores.chunks(chunks)
        fields = _entity_fields(index, entity)
        entity_score = scores.entity(entity)
        for at in _best(chunks, chunk_scores, per_node):
            rows.append(_row(fields[0], "Entity", "DESCRIBED_BY", _cid(index, chunks[at]), "Chunk",
                             entity_score, float(chunk_scores[at]), via_end=_sid(index, sections[at]),
                             entity=fields))
    return rows


def _entity_relations(index: WalkIndex, scores: _Scores, entities: list[int], per_node: int, hubs: np.ndarray
                      ) -> list[dict[str, Any]]:
    """Branch 3: RELATED edges of a frontier entity (neither end a hub), heaviest first, ties by the other's id,
    then by the start's (edge numbers follow start ids): of a pair's two relations in opposite directions a cut
    keeps the same one from either end, as the statement does."""
    rows = []
    for entity in entities:
        if hubs[entity]:
            continue
        edges = _neighbours(index.related_ptr, index.related_idx, entity)
        starts, ends = index.related_start[edges], index.related_end[edges]
        others = np.where(starts == entity, ends, starts)
        keep = ~hubs[others]
        edges, others = edges[keep], others[keep]
        if not len(edges):
            continue
        weights = index.related_weight[edges]
        order = np.lexsort((edges, others, -weights))[:per_node]
        scores.prefetch_entities(others[order])
        entity_score = scores.entity(entity)
        for at in order:
            edge, other = int(edges[at]), int(others[at])
            other_score = scores.entity(other)
            forward = int(index.related_start[edge]) == entity
            start, end = (entity, other) if forward else (other, entity)
            rows.append(_row(_eid(index, start), "Entity", "RELATED", _eid(index, end), "Entity",
                             entity_score if forward else other_score, other_score if forward else entity_score,
                             weight=float(weights[at]), entity=_entity_fields(index, other)))
    return rows


def _chunk_mentions(index: WalkIndex, scores: _Scores, chunks: list[int], per_node: int, hubs: np.ndarray
                    ) -> list[dict[str, Any]]:
    """Branch 4: entities a frontier chunk mentions (no hubs), most often mentioned there first."""
    chosen: list[tuple[int, np.ndarray]] = []
    for chunk in chunks:
        span = slice(index.mention_ptr[chunk], index.mention_ptr[chunk + 1])
        entities, counts = index.mention_idx[span], index.mention_count[span]
        keep = ~hubs[entities]
        entities, counts = entities[keep], counts[keep]
        if len(entities):
            chosen.append((chunk, entities[_best(entities, counts, per_node)]))
    if not chosen:
        return []
    scores.prefetch_entities(np.concatenate([entities for _, entities in chosen]))
    chunk_scores = scores.chunks(np.array([chunk for chunk, _ in chosen]))
    rows = []
    for (chunk, entities), chunk_score in zip(chosen, chunk_scores.tolist(), strict=True):
        for entity in entities.tolist():
            fields = _entity_fields(index, entity)
            rows.append(_row(_cid(index, chunk), "Chunk", "MENTIONS", fields[0], "Entity", chunk_score,
                             scores.entity(entity), entity=fields))
    return rows


def _chunk_homes(index: WalkIndex, scores: _Scores, chunks: list[int], per_node: int) -> list[dict[str, Any]]:
    """Branch 5: entities whose home is a frontier chunk's section, by id."""
    rows = []
    for chunk in chunks:
        section = int(index.chunk_section[chunk])
        if section < 0:
            continue
        entities = _neighbours(index.homed_ptr, index.homed_idx, section)[:per_node]
        if not len(entities):
            continue
        scores.prefetch_entities(entities)
        chunk_score = float(scores.chunks(np.array([chunk]))[0])
        for entity in entities:
            fields = _entity_fields(index, int(entity))
            rows.append(_row(fields[0], "Entity", "DESCRIBED_BY", _cid(index, chunk), "Chunk",
                             scores.entity(int(entity)), chunk_score, via_end=_sid(index, section),
                             entity=fields))
    return rows


def _chunk_links(index: WalkIndex, scores: _Scores, chunks: list[int], per_node: int, methods: set[str]
                 ) -> list[dict[str, Any]]:
    """Branch 6: the sections a frontier chunk's section links to (links ranked by their context's cosine; a link
    without a context vector is left out), each as its chunk closest to the question."""
    walked: list[tuple[int, int, np.ndarray]] = []  # (frontier chunk, its section, its walked links)
    for chunk in chunks:
        section = int(index.chunk_section[chunk])
        if section < 0:
            continue
        span = slice(int(index.link_ptr[section]), int(index.link_ptr[section + 1]))
        links = np.arange(span.start, span.stop)[_walked(index, span, methods) & index.link_has_vector[span]]
        if len(links):
            walked.append((chunk, section, links))
    if not walked:
        return []
    link_scores = scores.links(np.concatenate([links for _, _, links in walked]))  # one product for all
    chosen: list[tuple[int, int, list[int]]] = []  # (frontier chunk, its section, target sections)
    offset = 0
    for chunk, section, links in walked:
        targets = index.link_target[links]
        ranked = _best(targets, link_scores[offset:offset + len(links)], per_node)
        offset += len(links)
        chosen.append((chunk, section, list(dict.fromkeys(targets[ranked].tolist()))))
    best = _best_chunks(index, scores, sorted({t for _, _, targets in chosen for t in targets}))
    chunk_scores = scores.chunks(np.array([chunk for chunk, _, _ in chosen]))
    rows = []
    for (chunk, section, targets), chunk_score in zip(chosen, chunk_scores, strict=True):
        for target in targets:
            if target in best:
                end, end_score = best[target]
                rows.append(_row(_cid(index, chunk), "Chunk", "LINKS_TO", _cid(index, end), "Chunk",
                                 float(chunk_score), end_score, via_start=_sid(index, section),
                                 via_end=_sid(index, target)))
    return rows


def _best_chunks(index: WalkIndex, scores: _Scores, sections: list[int]) -> dict[int, tuple[int, float]]:
    """Each section's chunk closest to the question (ties by id), for sections with chunks."""
    ptr = index.section_chunk_ptr
    lists = [index.section_chunk_idx[ptr[s]:ptr[s + 1]] for s in sections]
    sizes = [len(chunks) for chunks in lists]
    if not sum(sizes):
        return {}
    chunks = np.concatenate(lists)
    segment = np.repeat(np.arange(len(sections)), sizes)
    chunk_scores = scores.chunks(chunks)
    order = np.lexsort((chunks, -chunk_scores, segment))
    first = order[np.r_[True, segment[order][1:] != segment[order][:-1]]]
    return {sections[segment[i]]: (int(chunks[i]), float(chunk_scores[i])) for i in first}
