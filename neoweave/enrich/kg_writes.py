"""Writing extractions: the entities, MENTIONS and RELATED evidence of per-chunk results, queued on a unit.

Apart from the extraction data classes (`neoweave/nlp/extraction.py`), which stay store-free so that query-time
keyphrases can use the fast extractor; the kg step and title mentions write through this.
"""

from __future__ import annotations

from typing import Any

from neoweave.nlp.extraction import ChunkExtraction
from neoweave.store.base import WriteUnit


def queue_writes(unit: WriteUnit, results: list[ChunkExtraction], *, source: str, now: str) -> tuple[int, int]:
    """Queue the entities, MENTIONS and RELATED evidence of extractions; (mentions, relations) queued."""
    entities: dict[str, dict[str, Any]] = {}
    mentions: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    for result in results:
        for mention in result.mentions:
            target = mention.target_id or mention.id
            entities.setdefault(target, {"id": target, "key": mention.key, "name": mention.name,
                                         "type": mention.type, "description": mention.description or None,
                                         "description_chunk": result.chunk_id, "method": result.method})
            mentions.append({"chunk_id": result.chunk_id, "entity_id": target, "origin_id": mention.id,
                             "count": mention.count, "name": mention.name, "context": mention.context,
                             "method": result.method})
        relations += [{"source_id": r.source, "target_id": r.target, "type": r.type, "chunk_id": result.chunk_id,
                       "weight": float(r.weight), "description": r.description, "method": result.method}
                      for r in result.relations if r.source != r.target]
    unit.run_batches("kg_upsert_entities", list(entities.values()), {"source": source, "now": now})
    unit.run_batches("kg_create_mentions", mentions, {"source": source, "now": now})
    unit.run_batches("kg_add_relations", relations, {"now": now})
    return len(mentions), len(relations)
