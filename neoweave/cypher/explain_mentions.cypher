// explain: which of the explained chunks mention which of the explained entities, so a view connects the
// context to the entities a strategy linked even where its walk did not pass through the mention (detail: the
// chunk's surface forms of the entity, weight: their total count).
// @param chunk_ids: LIST  chunk ids of the explanation
// @param entity_ids: LIST  entity ids of the explanation
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
WHERE e.id IN $entity_ids
RETURN c.id AS source, e.id AS target, reduce(text = '', form IN coalesce(m.names, [coalesce(m.name, '')]) |
       text + CASE WHEN text = '' THEN form ELSE ' / ' + form END) AS detail, m.count AS weight, m.method AS method
