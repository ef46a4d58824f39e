// The chunks mentioning each entity (recorded with a merge).
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (:Entity {id: entity_id})<-[:MENTIONS]-(c:Chunk)
RETURN entity_id AS id, collect(DISTINCT c.id) AS chunk_ids
