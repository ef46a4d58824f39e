// The chunks mentioning the given entities: resolution extracts them again when it dissolves those entities'
// merges.
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (:Entity {id: entity_id})<-[:MENTIONS]-(c:Chunk)
RETURN DISTINCT c.id AS chunk_id
ORDER BY chunk_id
