// Mention and relation counts of the entities `$ids` (every entity a part at a time after a run that read them
// all, `refresh_entities`; those a run changed, and after chunks were forgotten outside `enrich kg` (a document
// deleted or rewritten) the entities kg_forgotten_entities named before, so their counts are never those of a
// deleted source). Ids no longer in the graph (deleted with their last mention) are skipped.
// Mention counts (total occurrences: the sum of `count` over the entity's MENTIONS, one edge per chunk
// holding the total of its surface forms; for inverse-frequency weighting, ppr's hub cut and community ratings) and
// relation counts
// (the kg retriever skips hubs by this number: counting a hub's edges per question cost ~1 ms per 2,500).
// Counted by aggregation: a pattern comprehension per entity took 10.6 s on 80k entities against 4.6 s.
// Descriptions are refilled by `kg_refill_descriptions`, a separate statement: on FalkorDB 4.16 a SET followed
// by a WITH ... WHERE that drops the row is lost (every entity that already had a description kept
// mention_count null).
// Entities with nothing to change are not written: on FalkorDB every write to a vector-indexed node costs a
// vector re-insert (and an index rebuild).
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
OPTIONAL MATCH (e)<-[m:MENTIONS]-(:Chunk)
WITH e, sum(m.count) AS mentions
OPTIONAL MATCH (e)-[r:RELATED]-()
WITH e, mentions, count(r) AS relations
WHERE coalesce(e.mention_count, -1) <> mentions OR coalesce(e.relation_count, -1) <> relations
SET e.mention_count = mentions, e.relation_count = relations
RETURN count(e) AS updated
