// An entity's relations, strongest first.
// @param id: STRING  entity id
// @param limit: INTEGER  at most this many
MATCH (e:Entity {id: $id})-[r:RELATED]-(o:Entity)
RETURN startNode(r) = e AS outgoing, o.id AS other_id, o.name AS other_name, r.type AS type, r.weight AS weight,
       r.description AS description, coalesce(r.chunk_ids, [r.chunk_id]) AS chunk_ids, r.method AS method
ORDER BY r.weight DESC, other_id, outgoing DESC, type
LIMIT $limit
