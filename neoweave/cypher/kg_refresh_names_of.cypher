// kg_refresh_names for the entities `$ids` only (the record of change, kg_changes_mark_entities): the same rule,
// read from their own mentions.
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[m:MENTIONS]-(c:Chunk)
WHERE coalesce(e.method, '') <> 'import' AND e.id IN coalesce(m.origin_ids, [m.origin_id])
WITH e, min(c.id) AS first_id
MATCH (:Chunk {id: first_id})-[m:MENTIONS]->(e)
WITH e, m, coalesce(m.origin_ids, [m.origin_id]) AS origins
WITH e, m, [i IN range(0, size(origins) - 1) WHERE origins[i] = e.id][0] AS own
WITH e, coalesce(m.names, [m.name])[own] AS name, coalesce(m.types, [m.type])[own] AS known
WITH e, name, CASE WHEN known IS NULL OR known = '' THEN e.type ELSE known END AS type
WHERE name IS NOT NULL AND (name <> e.name OR type <> e.type)
SET e.name = name, e.type = type, e.embedding = null
RETURN count(e) AS updated
