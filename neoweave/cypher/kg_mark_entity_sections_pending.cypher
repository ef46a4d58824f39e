// Sections whose inferred links must be recomputed because entities they mention changed (home, merge).
// @param entity_ids: LIST  entity ids
UNWIND $entity_ids AS entity_id
MATCH (s:Section)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(:Entity {id: entity_id})
SET s.inferred_pending = true
