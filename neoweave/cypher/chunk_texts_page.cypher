// Every chunk's text, a page at a time in id order (filling `search_text` in a graph made before it existed).
// @param after: STRING  the last id of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (c:Chunk)
WHERE {{key_after c.id $after}}
RETURN c.id AS id, c.text AS text
ORDER BY c.id
LIMIT $limit
