// explain: which of the explained chunks mention which of the explained entities, so a view connects the
// context to the entities a strategy linked even where its walk did not pass through the mention.
// @param chunk_ids: LIST  chunk ids of the explanation
// @param entity_ids: LIST  entity ids of the explanation
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
WHERE e.id IN $entity_ids
RETURN c.id AS source, e.id AS target, coalesce(m.name, '') AS detail, m.count AS weight, m.method AS method
