// Stored embeddings of entities (resolution compares candidates within a block).
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
WHERE e.embedding IS NOT NULL
RETURN e.id AS id, e.embedding AS embedding
