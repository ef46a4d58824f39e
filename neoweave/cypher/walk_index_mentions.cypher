// Walk index build: the MENTIONS of one page of chunks in key order, with the mention count (a chunk without
// any gives a row with a null entity, so the page cursor moves past it).
// @param after: STRING  the last chunk key of the previous page ('' for the first)
// @param limit: INTEGER  chunks per page
MATCH (c:Chunk)
WHERE {{key_after c.id $after}}
WITH c ORDER BY c.id LIMIT $limit
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
RETURN c.id AS key, e.id AS entity_id, m.count AS count
ORDER BY key
