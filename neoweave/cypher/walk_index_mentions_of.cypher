// ppr's walk index, updated: the mentions of these entities (the entities the record of change lists since the
// index was built: every mention that changed is one of theirs), as (chunk, entity, count) rows.
// @param entity_ids: LIST  entity ids
UNWIND $entity_ids AS entity_id
MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity {id: entity_id})
RETURN c.id AS key, e.id AS entity_id, coalesce(m.count, 1) AS count
