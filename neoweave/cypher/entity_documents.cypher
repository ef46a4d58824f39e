// The documents each entity is mentioned in (resolution: a partial name is merged only where both appear).
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(c:Chunk)
RETURN e.id AS id, collect(DISTINCT c.doc_id) AS doc_ids
