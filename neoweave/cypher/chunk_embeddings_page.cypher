// Every chunk's embedding, a page at a time in id order (the scale benchmark's exact search; exports).
// @param after: STRING  the last id of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (c:Chunk)
WHERE {{key_after c.id $after}}
RETURN c.id AS id, c.embedding AS embedding
ORDER BY c.id
LIMIT $limit
