// kg_refresh_entities for the entities `$ids` only: after chunks were forgotten outside `enrich kg` (a document
// deleted or rewritten), the entities kg_forgotten_entities named before, so their counts are never those of a
// deleted source. Ids no longer in the graph (deleted with their last mention) are skipped; unchanged entities
// are not written (each write re-inserts a vector on FalkorDB).
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
