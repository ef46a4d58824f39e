// Walk index build: one page of chunks in key order with their section and embedding (neoweave.query.walk_index).
// @param after: STRING  the last key of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (c:Chunk)
WHERE {{key_after c.id $after}}
WITH c ORDER BY c.id LIMIT $limit
OPTIONAL MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS key, s.id AS section_id, c.embedding AS embedding
ORDER BY key
