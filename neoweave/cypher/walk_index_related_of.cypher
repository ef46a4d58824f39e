// ppr's walk index, updated: the relations touching these entities, from their start (`outgoing`) or their end;
// an edge between two listed entities comes in both halves (the reader keeps the outgoing one).
// @param entity_ids: LIST  entity ids
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[r:RELATED]->(o:Entity)
RETURN e.id AS key, o.id AS other_id, r.weight AS weight, r.type AS type, true AS outgoing
UNION ALL
UNWIND $entity_ids AS entity_id
MATCH (o:Entity)-[r:RELATED]->(e:Entity {id: entity_id})
RETURN o.id AS key, e.id AS other_id, r.weight AS weight, r.type AS type, false AS outgoing
